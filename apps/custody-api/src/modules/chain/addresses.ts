import { BIP32Factory } from 'bip32';
import * as bitcoin from 'bitcoinjs-lib';
import { computeAddress, getAddress, isAddress } from 'ethers';
import { createHash } from 'node:crypto';
import * as ecc from 'tiny-secp256k1';
import type { Environment } from '../../common/caller';

const bip32 = BIP32Factory(ecc);
// Witness v1 (Taproot, bech32m `bc1p…` / `tb1p…`) addresses are checked on the curve: without an ECC library
// bitcoinjs-lib refuses every one of them ("No ECC Library provided"), so none could be a withdrawal target.
bitcoin.initEccLib(ecc);

/** The network facts address code needs about an asset. */
export interface AddressAsset {
  symbol: string;
  network: string;
  requiresTag: boolean;
}

export interface DerivedAddress {
  address: string;
  tag: string | null;
  derivationPath: string;
}

const XRP_ALPHABET = 'rpshnaf39wBUDNEGHJKLM4PQRST7VWXYZ2bcdeCg65jkm8oFqi1tuvAxyz';

const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest();

function base58Encode(bytes: Buffer, alphabet: string): string {
  let value = BigInt(`0x${bytes.toString('hex') || '0'}`);
  let out = '';
  while (value > 0n) {
    out = alphabet[Number(value % 58n)] + out;
    value /= 58n;
  }
  for (const byte of bytes) {
    if (byte !== 0) break;
    out = alphabet[0] + out;
  }
  return out;
}

function base58Decode(text: string, alphabet: string): Buffer | undefined {
  let value = 0n;
  for (const char of text) {
    const digit = alphabet.indexOf(char);
    if (digit < 0) return undefined;
    value = value * 58n + BigInt(digit);
  }
  let hex = value === 0n ? '' : value.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  let leading = 0;
  while (text[leading] === alphabet[0]) leading++;
  return Buffer.concat([Buffer.alloc(leading), Buffer.from(hex, 'hex')]);
}

/** Classic XRP Ledger address (base58check, ripple alphabet) of a compressed secp256k1 public key. */
export function xrpAddressFromPublicKey(publicKey: Uint8Array): string {
  const payload = Buffer.concat([Buffer.from([0]), Buffer.from(bitcoin.crypto.hash160(publicKey))]);
  const checksum = sha256(sha256(payload)).subarray(0, 4);
  return base58Encode(Buffer.concat([payload, checksum]), XRP_ALPHABET);
}

export function isXrpAddress(address: string): boolean {
  if (!/^r[1-9A-HJ-NP-Za-km-z]{24,34}$/.test(address)) return false;
  const bytes = base58Decode(address, XRP_ALPHABET);
  if (!bytes || bytes.length !== 25 || bytes[0] !== 0) return false;
  const checksum = sha256(sha256(bytes.subarray(0, 21))).subarray(0, 4);
  return checksum.equals(bytes.subarray(21));
}

const btcNetwork = (environment: Environment) =>
  environment === 'production' ? bitcoin.networks.bitcoin : bitcoin.networks.testnet;

/**
 * Derives a deposit address from the tenant's BIP32 seed.
 * BTC: BIP84 native segwit (bech32), coin 0 (production) or 1 (sandbox/testnet).
 * ETH and USDT (ERC-20): BIP44 coin 60, EIP-55 checksummed; sandbox uses account 1'.
 * XRP: one BIP44 coin 144 account address per tenant and environment, the wallet told apart by its tag.
 */
export function deriveDepositAddress(
  seed: Buffer,
  asset: AddressAsset,
  environment: Environment,
  index: number,
): DerivedAddress {
  const root = bip32.fromSeed(seed);
  const account = environment === 'production' ? 0 : 1;
  switch (asset.network) {
    case 'bitcoin': {
      const coin = environment === 'production' ? 0 : 1;
      const path = `m/84'/${coin}'/0'/0/${index}`;
      const node = root.derivePath(path);
      const { address } = bitcoin.payments.p2wpkh({
        pubkey: Buffer.from(node.publicKey),
        network: btcNetwork(environment),
      });
      if (!address) throw new Error('Could not derive a bech32 address');
      return { address, tag: null, derivationPath: path };
    }
    case 'ethereum': {
      const path = `m/44'/60'/${account}'/0/${index}`;
      const node = root.derivePath(path);
      const address = computeAddress(`0x${Buffer.from(node.publicKey).toString('hex')}`);
      return { address, tag: null, derivationPath: path };
    }
    case 'ripple': {
      const path = `m/44'/144'/${account}'/0/0`;
      const node = root.derivePath(path);
      // Tags are 32-bit; index 0 is skipped so a missing tag never credits a wallet.
      return {
        address: xrpAddressFromPublicKey(node.publicKey),
        tag: String(index + 1),
        derivationPath: path,
      };
    }
    default:
      throw new Error(`No address derivation for network ${asset.network}`);
  }
}

/**
 * Validates an external address for the asset's network (checksum included) and returns its canonical form, the
 * one spelling stored and compared (address book, policy lists, withdrawals): EIP-55 for Ethereum, lowercase for
 * bech32 Bitcoin addresses (case-insensitive by BIP 173; base58 ones are case-sensitive and kept as sent), and an
 * XRP tag without leading zeros ("07" is the tag 7). Or an error message.
 */
export function normalizeExternalAddress(
  asset: AddressAsset,
  environment: Environment,
  address: string,
  tag: string | null | undefined,
): { ok: true; address: string; tag: string | null } | { ok: false; field: string; message: string } {
  switch (asset.network) {
    case 'bitcoin':
      try {
        const network = btcNetwork(environment);
        bitcoin.address.toOutputScript(address, network);
        const lower = address.toLowerCase();
        return { ok: true, address: lower.startsWith(`${network.bech32}1`) ? lower : address, tag: null };
      } catch {
        return {
          ok: false,
          field: 'address',
          message: `Not a valid Bitcoin ${environment === 'production' ? 'mainnet' : 'testnet'} address`,
        };
      }
    case 'ethereum':
      if (!/^0x[0-9a-fA-F]{40}$/.test(address) || !isAddress(address)) {
        return { ok: false, field: 'address', message: 'Not a valid Ethereum address (EIP-55 checksum)' };
      }
      return { ok: true, address: getAddress(address), tag: null };
    case 'ripple':
      if (!isXrpAddress(address)) {
        return { ok: false, field: 'address', message: 'Not a valid XRP Ledger address' };
      }
      if (tag !== undefined && tag !== null && (!/^\d{1,10}$/.test(tag) || Number(tag) > 0xffffffff)) {
        return { ok: false, field: 'tag', message: 'Destination tag must be an integer 0..4294967295' };
      }
      return { ok: true, address, tag: tag === undefined || tag === null ? null : String(Number(tag)) };
    default:
      return { ok: false, field: 'address', message: `Unsupported network ${asset.network}` };
  }
}
