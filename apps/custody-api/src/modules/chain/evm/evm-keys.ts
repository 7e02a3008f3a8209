import { SecretBox } from '@tessera/auth';
import { BIP32Factory } from 'bip32';
import { computeAddress } from 'ethers';
import * as ecc from 'tiny-secp256k1';
import { type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';

const bip32 = BIP32Factory(ecc);

/**
 * Signing keys of the EVM chain, derived (BIP32/BIP44, coin 60) from the tenant's seed, which is stored
 * sealed with SECRETS_MASTER_KEY (purpose `custody-hd-seed`, the tenant id as associated data). A key lives
 * only for the signature; the seed is never logged or kept in memory beyond the call.
 */
export class EvmKeys {
  private readonly seedBox: SecretBox;

  constructor(masterKey: string) {
    this.seedBox = new SecretBox(masterKey, 'custody-hd-seed');
  }

  account(tenantId: string, sealedSeed: string, derivationPath: string): PrivateKeyAccount {
    const seed = this.seedBox.open(sealedSeed, tenantId);
    const node = bip32.fromSeed(seed).derivePath(derivationPath);
    if (!node.privateKey) throw new Error('No private key at this path');
    const account = privateKeyToAccount(`0x${Buffer.from(node.privateKey).toString('hex')}`);
    seed.fill(0);
    return account;
  }
}

/**
 * The tenant's gas station per environment: BIP44 change branch 1, index 0 of the environment's account
 * (deposit addresses use branch 0). It pays the gas of ERC-20 withdrawals sent from deposit addresses.
 */
export const gasStationPath = (environment: string) =>
  `m/44'/60'/${environment === 'production' ? 0 : 1}'/1/0`;

/** The gas station's address (EIP-55) for an opened seed: what an operator funds with ETH. */
export function gasStationAddress(seed: Buffer, environment: string): string {
  const node = bip32.fromSeed(seed).derivePath(gasStationPath(environment));
  return computeAddress(`0x${Buffer.from(node.publicKey).toString('hex')}`);
}
