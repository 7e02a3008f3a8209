import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  type CustodyTransactionAdvancePayload,
  type CustodyTransactionStatus,
  JOBS,
} from '@tessera/contracts';
import { ProcessJob } from '@tessera/platform';
import { CHAIN_ADAPTER, type ChainAdapter } from '../chain/chain-adapter';
import type { BalanceDelta } from '../ledger/ledger';
import {
  balanceUpdatedEvent,
  NEXT_STATUS,
  statusUpdatedFields,
  TERMINAL_STATUSES,
  type TransactionRecord,
} from './transaction.record';
import { AdvanceEnqueuer } from './advance-enqueuer';
import { TransactionsRepository } from './transactions.repository';

/** The ledger effect of entering a terminal state. */
function terminalDeltas(t: TransactionRecord, status: CustodyTransactionStatus): BalanceDelta[] {
  const units = BigInt(t.amount);
  const base = { walletId: t.walletId, transactionId: t.id };
  if (t.type === 'Withdrawal') {
    if (status === 'Completed') return [{ ...base, kind: 'post', locked: -units, total: -units }];
    return [{ ...base, kind: 'release', locked: -units, available: units }];
  }
  if (t.type === 'Deposit') {
    if (status === 'Completed') {
      return [{ ...base, kind: 'deposit-credit', pending: -units, total: units, available: units }];
    }
    return [{ ...base, kind: 'deposit-drop', pending: -units }];
  }
  // Internal transfers moved both balances atomically at creation.
  return [];
}

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
    let next = NEXT_STATUS[current.status];
    if (!next) return;
    let txHash: string | null = null;
    let failureReason: string | null = null;
    if (next === 'Broadcasting' && current.type !== 'InternalTransfer') {
      const result = await this.chain.broadcast({
        transactionId: current.id,
        network: current.assetNetwork,
        destinationAddress: current.destinationAddress,
        amount: current.amount,
      });
      if (result.ok) txHash = result.txHash;
      else {
        next = 'Failed';
        failureReason = result.reason;
      }
    }
    const status = next;
    const terminal = TERMINAL_STATUSES.includes(status);
    const deltas = terminal ? terminalDeltas(current, status) : [];
    const updated = await this.repository.transition(
      current.id,
      current.status,
      status,
      { txHash, failureReason, terminal },
      deltas,
      (t) => [
        {
          tenantId: t.tenantId,
          eventType: 'transaction.status.updated',
          entityType: 'transaction',
          entityId: t.id,
          data: statusUpdatedFields(t, current.status),
        },
        ...(deltas.length > 0 ? [balanceUpdatedEvent(t.tenantId, t.vaultId, t.assetId)] : []),
      ],
    );
    if (!updated) return;
    this.logger.debug({ transactionId: updated.id, status }, 'transaction moved');
    if (terminal) return;
    await this.enqueuer.enqueue(updated.id, status, updated.assetConfirmations);
  }
}
