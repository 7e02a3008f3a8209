import { Injectable, Logger } from '@nestjs/common';
import {
  type CustodyTransactionAdvancePayload,
  type CustodyTransactionStatus,
  JOBS,
} from '@tessera/contracts';
import { ProcessJob } from '@tessera/platform';
import type { EntityManager } from 'typeorm';
import { holdBookEntry } from '../address-book/address-book.repository';
import { ChainRouter } from '../chain/chain-router';
import { RetryLaterError } from '../chain/evm/evm-chain.adapter';
import {
  balanceUpdatedEvent,
  NEXT_STATUS,
  statusUpdatedEvent,
  TERMINAL_STATUSES,
  type TransactionRecord,
} from './transaction.record';
import { AdvanceEnqueuer } from './advance-enqueuer';
import { terminalDeltas } from './terminal-effects';
import { StepBatches } from './step-batches';
import { TransactionsRepository, type TransitionMove } from './transactions.repository';
import { WithdrawalApprovalsRepository } from './withdrawal-approvals.repository';

/** The failureReason of a withdrawal whose destination left the address book before it was sent. */
export const DESTINATION_REMOVED =
  'The destination address was removed from the address book before the withdrawal was sent';

/**
 * The transaction state machine (worker role). Each job moves one transaction from `expectedStatus`, and on
 * through the steps due at once; a stale or repeated job finds another status and does nothing.
 */
@Injectable()
export class TransactionsProcessor {
  private readonly logger = new Logger(TransactionsProcessor.name);

  constructor(
    private readonly repository: TransactionsRepository,
    private readonly steps: StepBatches,
    private readonly enqueuer: AdvanceEnqueuer,
    private readonly chains: ChainRouter,
    private readonly approvals: WithdrawalApprovalsRepository,
  ) {}

  @ProcessJob(JOBS.CUSTODY_TRANSACTION_ADVANCE)
  async advance(payload: CustodyTransactionAdvancePayload): Promise<void> {
    const current = await this.steps.load(payload.transactionId);
    if (!current || current.status !== payload.expectedStatus) return;
    // The job's own step: if it fails, the job fails and BullMQ retries it.
    let moved = await this.step(current);
    // The steps due at once run on in this job, each with its own commit and event (decision 0424). One that
    // must wait, or one that fails, goes to the queue as a job of its own (retried there, swept if lost).
    while (moved && this.enqueuer.dueNow(moved.status, moved.assetConfirmations)) {
      const from: TransactionRecord = moved;
      try {
        moved = await this.step(from);
      } catch (err) {
        moved = from;
        this.logger.warn(
          { transactionId: from.id, status: from.status, err: (err as Error).message },
          'step handed to the queue',
        );
        break;
      }
    }
    if (moved) await this.enqueuer.enqueue(moved.id, moved.status, moved.assetConfirmations);
  }

  /**
   * Moves `current` one step from its status. Returns the moved record when its next step is the machine's,
   * undefined when there is none: terminal, moved by someone else (a cancel), waiting for approvals, or the
   * chain's watcher's to take.
   */
  private async step(current: TransactionRecord): Promise<TransactionRecord | undefined> {
    const next = NEXT_STATUS[current.status];
    if (!next) return undefined;
    // A withdrawal waiting for its approvals stays Submitted: the quorum enqueues its start (decision 0220).
    if (
      current.type === 'Withdrawal' &&
      current.status === 'Submitted' &&
      (await this.approvals.isPending(current.id))
    ) {
      return undefined;
    }
    const chain = this.chains.for(current);
    // On a watched chain the watcher moves what depends on the chain: a sent withdrawal out of Broadcasting
    // (its receipt) and a deposit or withdrawal out of Confirming (its confirmations).
    if (chain.watchesConfirmations && this.watcherStep(current)) return undefined;
    // The broadcast is the one step with an effect outside the database: it runs under the row lock, so a
    // cancel either lands before it (and nothing is broadcast) or waits and then finds Broadcasting. A
    // deposit on a watched chain was broadcast by its sender: the step only moves its status.
    const sends =
      next === 'Broadcasting' &&
      current.type !== 'InternalTransfer' &&
      !(chain.watchesConfirmations && current.type === 'Deposit');
    let updated: TransactionRecord | undefined;
    try {
      updated = sends
        ? await this.repository.transitionWhileLocked(current.id, current.status, (locked, manager) =>
            this.broadcast(locked, manager),
          )
        : await this.steps.transition(current.id, current.status, this.move(current, next, null, null));
    } catch (err) {
      if (err instanceof RetryLaterError) {
        this.logger.warn({ transactionId: current.id, reason: err.message }, 'broadcast postponed');
      }
      throw err;
    }
    if (!updated) return undefined;
    this.logger.debug({ transactionId: updated.id, status: updated.status }, 'transaction moved');
    if (TERMINAL_STATUSES.includes(updated.status)) return undefined;
    if (chain.watchesConfirmations && this.watcherStep(updated)) return undefined;
    return updated;
  }

  /**
   * The watcher's steps: it follows only transactions with an on-chain leg (evm_transfers rows). An internal
   * transfer is a ledger move inside the custodian with nothing on the chain: the machine completes it, as on
   * the simulator (decision 0444).
   */
  private watcherStep(t: TransactionRecord): boolean {
    if (t.type === 'InternalTransfer') return false;
    return t.status === 'Confirming' || (t.status === 'Broadcasting' && t.type === 'Withdrawal');
  }

  private async broadcast(current: TransactionRecord, manager: EntityManager): Promise<TransitionMove> {
    // The destination must still be in the address book when the funds leave (it was when the withdrawal was
    // created; it may have been deleted while the withdrawal waited for its approvals or its step). Unless an
    // earlier attempt may already have sent it (decision 0440): that one is recorded, never failed.
    const chain = this.chains.for(current);
    if (
      current.type === 'Withdrawal' &&
      !(await holdBookEntry(manager, current)) &&
      !(await this.chains.sendMayBeOnChain(manager, current))
    ) {
      return this.move(current, 'Failed', null, DESTINATION_REMOVED);
    }
    const result = await chain.broadcast({
      transactionId: current.id,
      network: current.assetNetwork,
      destinationAddress: current.destinationAddress,
      amount: current.amount,
      record: current,
      manager,
    });
    if (!result.ok) return this.move(current, 'Failed', null, result.reason);
    const m = this.move(current, 'Broadcasting', result.txHash, null);
    return {
      ...m,
      patch: { ...m.patch, networkFee: result.networkFee ?? null, feeCurrency: result.feeCurrency ?? null },
      deltas: result.deltas ?? [],
      events: (t) => [
        statusUpdatedEvent(t, current.status),
        ...((result.deltas ?? []).length > 0 ? [balanceUpdatedEvent(t.tenantId, t.vaultId, t.assetId)] : []),
      ],
    };
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
