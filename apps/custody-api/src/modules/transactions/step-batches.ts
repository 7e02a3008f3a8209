import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { CustodyTransactionStatus } from '@tessera/contracts';
import { Batcher, sqlState } from '@tessera/platform';
import type { DataSource } from 'typeorm';
import type { TransactionRecord } from './transaction.record';
import { type QueuedMove, TransactionsRepository, type TransitionMove } from './transactions.repository';

/** Postgres' deadlock_detected: the batch is run again one move at a time. */
const DEADLOCK = '40P01';

/**
 * Group commit for the state machine's steps (worker role, decision 0423). The advance jobs that run at the
 * same time load their transactions with one query, and their moves commit together: one compare-and-set
 * UPDATE, one read and one outbox insert in one database transaction, instead of five statements and a
 * commit per step. A move with a ledger effect (a deposit's or withdrawal's terminal step, a transfer's
 * reversal) still commits alone through the repository: it can fail alone (InsufficientFundsError).
 */
@Injectable()
export class StepBatches {
  private readonly loads: Batcher<string, TransactionRecord | undefined>;
  private readonly moves: Batcher<QueuedMove, TransactionRecord | undefined>;

  constructor(
    @InjectDataSource() db: DataSource,
    private readonly repository: TransactionsRepository,
  ) {
    this.loads = new Batcher({
      run: async (ids) => {
        const byId = new Map((await repository.loadMany([...new Set(ids)])).map((r) => [r.id, r]));
        return ids.map((id) => byId.get(id));
      },
      maxConcurrentBatches: 2,
    });
    this.moves = new Batcher({
      run: (items) => db.transaction((manager) => repository.applyTransitions(manager, items)),
      // Two jobs for one transaction (a sweeper's re-drive beside the original) never share a batch.
      conflictKey: (item) => item.id,
      maxConcurrentBatches: 2,
      retryAlone: (error) => sqlState(error) === DEADLOCK,
    });
  }

  /** The transaction by id, any tenant (the worker's read at the start of a step). */
  load(id: string): Promise<TransactionRecord | undefined> {
    return this.loads.submit(id);
  }

  /** Applies `move` if the transaction is still in `expected`; undefined when it had moved on. */
  transition(
    id: string,
    expected: CustodyTransactionStatus,
    move: TransitionMove,
  ): Promise<TransactionRecord | undefined> {
    if (move.deltas.length > 0) {
      return this.repository.transition(id, expected, move.next, move.patch, move.deltas, move.events);
    }
    return this.moves.submit({ id, expected, move });
  }
}
