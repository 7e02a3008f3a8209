import { Injectable, Logger } from '@nestjs/common';
import { ChainRouter } from '../chain-router';
import { EvmConfirmations } from './evm-confirmations';
import { EvmRepository } from './evm.repository';

/** The chain id of local development nodes (Hardhat, Anvil), which start from a new genesis block each run. */
export const LOCAL_CHAIN_ID = 31337;

export const CHAIN_RESTARTED =
  'The local chain was restarted (a new genesis block): the chain this transaction was on is gone';

/**
 * Knows the chain by its genesis block, not only by its id (decision 0467). The first round records the node's
 * genesis hash for the chain id; every round after compares. Another genesis under the same id is another chain:
 * - on the local chain id (a Hardhat or Anvil node restarted under a database that outlived it), the old chain's
 *   open transfers are Failed with their holds released, and its blocks, cursor, nonces and unrecorded sends are
 *   forgotten, so the new chain is scanned from its first block and sent to from nonce 0;
 * - on any other id nothing is touched and the round stops with an error naming both hashes: the node is not the
 *   chain this database holds (a wrong CHAIN_EVM_RPC_URL), and a person has to look.
 */
@Injectable()
export class EvmChainIdentity {
  private readonly logger = new Logger(EvmChainIdentity.name);
  /** The genesis hash this process last found recorded: the same one again needs no database read. */
  private verified?: string;

  constructor(
    private readonly chains: ChainRouter,
    private readonly repository: EvmRepository,
    private readonly confirmations: EvmConfirmations,
  ) {}

  /** Run under the watcher's leadership, before anything reads or writes the chain's records. */
  async check(): Promise<void> {
    const { settings, rpc } = this.chains.evm!;
    const genesis = await rpc.blockHash(0n);
    if (!genesis) throw new Error('The node has no block 0');
    if (genesis === this.verified) return;
    const recorded = await this.repository.recordGenesis(settings.chainId, genesis);
    if (recorded === genesis) {
      this.verified = genesis;
      return;
    }
    if (settings.chainId !== LOCAL_CHAIN_ID) {
      throw new Error(
        `The node's genesis block is ${genesis}, but chain ${settings.chainId} in this database began with ` +
          `${recorded}: CHAIN_EVM_RPC_URL points at another chain; nothing was scanned or sent`,
      );
    }
    const failed = await this.confirmations.failAllOpen(CHAIN_RESTARTED);
    const credited = await this.repository.forgetChain(settings.chainId, genesis);
    this.logger.warn(
      {
        chainId: settings.chainId,
        was: recorded,
        now: genesis,
        failed,
        creditedDepositsLeftOnOldChain: credited,
      },
      'the local chain was restarted: its open transfers failed, scanning and nonces start again on the new chain',
    );
    this.verified = genesis;
  }
}
