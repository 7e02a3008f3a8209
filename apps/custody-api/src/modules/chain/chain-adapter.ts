import { createHash } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import type { BalanceDelta } from '../ledger/ledger';
import type { TransactionRecord } from '../transactions/transaction.record';

export const CHAIN_ADAPTER = Symbol('CHAIN_ADAPTER');

export interface BroadcastRequest {
  transactionId: string;
  network: string;
  destinationAddress: string;
  amount: string;
  /** The locked transaction row and the database transaction holding the lock (nonces, fee holds). */
  record: TransactionRecord;
  manager: EntityManager;
}

export type BroadcastResult =
  | {
      ok: true;
      txHash: string;
      /** The network fee reserved for this send (base units of `feeCurrency`) and its ledger hold. */
      networkFee?: string;
      feeCurrency?: string;
      deltas?: BalanceDelta[];
    }
  | { ok: false; reason: string; deltas?: BalanceDelta[] };

/** What the transaction machine needs from a chain: `sim` (simulator) and `evm` (a JSON-RPC node). */
export interface ChainAdapter {
  readonly name: string;
  /**
   * True when the chain's watcher, not the machine's timer, moves a withdrawal out of Broadcasting and a deposit
   * or withdrawal out of Confirming (it waits for receipts and confirmations; internal transfers stay the machine's).
   */
  readonly watchesConfirmations: boolean;
  /** Delay before the next step of the machine. */
  stepDelayMs(): number;
  /** How long Confirming lasts for an asset needing `confirmations` blocks. */
  confirmationDelayMs(confirmations: number): number;
  broadcast(request: BroadcastRequest): Promise<BroadcastResult>;
  /**
   * True when a send of this transaction was signed and committed but never recorded (its step rolled back after
   * the chain may have taken it): it may be on the chain, so it is neither cancelled nor failed, and the next
   * broadcast attempt records it (decision 0440). Read inside the caller's database transaction, under the
   * transaction's row lock.
   */
  sendMayBeOnChain(manager: EntityManager, transactionId: string): Promise<boolean>;
}

/**
 * Deterministic simulator: the tx hash is a hash of the transaction id; broadcasts to the configured
 * failing destinations fail; delays come from config.
 */
export class SimChainAdapter implements ChainAdapter {
  readonly name = 'sim';
  readonly watchesConfirmations = false;

  constructor(
    private readonly options: { stepDelayMs: number; blockMs: number; failDestinations: string[] },
  ) {}

  stepDelayMs(): number {
    return this.options.stepDelayMs;
  }

  confirmationDelayMs(confirmations: number): number {
    return this.options.blockMs * confirmations;
  }

  async broadcast(request: BroadcastRequest): Promise<BroadcastResult> {
    if (this.options.failDestinations.includes(request.destinationAddress)) {
      return { ok: false, reason: 'Simulated broadcast rejection by the network' };
    }
    const digest = createHash('sha256').update(`sim:${request.transactionId}`).digest('hex');
    return { ok: true, txHash: request.network === 'bitcoin' ? digest : `0x${digest}` };
  }

  /** A simulated send happens inside its step's database transaction: nothing leaves without being recorded. */
  async sendMayBeOnChain(): Promise<boolean> {
    return false;
  }
}
