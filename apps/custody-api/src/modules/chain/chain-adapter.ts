import { createHash } from 'node:crypto';

export const CHAIN_ADAPTER = Symbol('CHAIN_ADAPTER');

export interface BroadcastRequest {
  transactionId: string;
  network: string;
  destinationAddress: string;
  amount: string;
}

export type BroadcastResult = { ok: true; txHash: string } | { ok: false; reason: string };

/** What the transaction machine needs from a chain. `sim` is the only implementation so far. */
export interface ChainAdapter {
  readonly name: string;
  /** Delay before the next step of the machine. */
  stepDelayMs(): number;
  /** How long Confirming lasts for an asset needing `confirmations` blocks. */
  confirmationDelayMs(confirmations: number): number;
  broadcast(request: BroadcastRequest): Promise<BroadcastResult>;
}

/**
 * Deterministic simulator: the tx hash is a hash of the transaction id; broadcasts to the configured
 * failing destinations fail; delays come from config.
 */
export class SimChainAdapter implements ChainAdapter {
  readonly name = 'sim';

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
}
