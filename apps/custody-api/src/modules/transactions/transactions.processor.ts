import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  type CustodyTransactionAdvancePayload,
  type CustodyTransactionStatus,
  JOBS,
} from '@tessera/contracts';
import { ProcessJob } from '@tessera/platform';
import { CHAIN_ADAPTER, type ChainAdapter } from '../chain/chain-adapter';
import {
  balanceUpdatedEvent,
  NEXT_STATUS,
  statusUpdatedEvent,
  TERMINAL_STATUSES,
  type TransactionRecord,
} from './transaction.record';
import { AdvanceEnqueuer } from './advance-enqueuer';
import { terminalDeltas } from './terminal-effects';
import { TransactionsRepository, type TransitionMove } from './transactions.repository';

/**
 * The transaction state machine (worker role). Each job moves one transaction one step from
 * `expectedStatus`; a stale or repeated job finds another status and does nothing.
 */
@Injectable()
export class TransactionsProcessor {
  private readonly logger = new Logger(TransactionsProcessor.name);

  constructor(
    private readonly repository: TransactionsRepository,
    private readonly enqueuer: AdvanceEnqueuer,
    @Inject(CHAIN_ADAPTER) private readonly chain: ChainAdapter,
  ) {}

  @ProcessJob(JOBS.CUSTODY_TRANSACTION_ADVANCE)
  async advance(payload: CustodyTransactionAdvancePayload): Promise<void> {
    const current = await this.repository.load(payload.transactionId);
    if (!current || current.status !== payload.expectedStatus) return;
    const next = NEXT_STATUS[current.status];
    if (!next) return;
    // The broadcast is the one step with an effect outside the database: it runs under the row lock, so a
    // cancel either lands before it (and nothing is broadcast) or waits and then finds Broadcasting.
    const updated =
      next === 'Broadcasting' && current.type !== 'InternalTransfer'
        ? await this.repository.transitionWhileLocked(current.id, current.status, (locked) =>
            this.broadcast(locked),
          )
        : await this.apply(current, this.move(current, next, null, null));
    if (!updated) return;
    this.logger.debug({ transactionId: updated.id, status: updated.status }, 'transaction moved');
    if (TERMINAL_STATUSES.includes(updated.status)) return;
    await this.enqueuer.enqueue(updated.id, updated.status, updated.assetConfirmations);
  }

  private apply(current: TransactionRecord, m: TransitionMove) {
    return this.repository.transition(current.id, current.status, m.next, m.patch, m.deltas, m.events);
  }

  private async broadcast(current: TransactionRecord): Promise<TransitionMove> {
    const result = await this.chain.broadcast({
      transactionId: current.id,
      network: current.assetNetwork,
      destinationAddress: current.destinationAddress,
      amount: current.amount,
    });
    return result.ok
      ? this.move(current, 'Broadcasting', result.txHash, null)
      : this.move(current, 'Failed', null, result.reason);
  }

  private move(
    current: TransactionRecord,
    status: CustodyTransactionStatus,
    txHash: string | null,
    failureReason: string | null,
  ): TransitionMove {
    const terminal = TERMINAL_STATUSES.includes(status);
    const deltas = terminal ? terminalDeltas(current, status) : [];
    return {
      next: status,
      patch: { txHash, failureReason, terminal },
      deltas,
      events: (t) => [
        statusUpdatedEvent(t, current.status),
        ...(deltas.length > 0 ? [balanceUpdatedEvent(t.tenantId, t.vaultId, t.assetId)] : []),
      ],
    };
  }
}
