import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { notifyChannel } from '@tessera/platform';
import type { DataSource, EntityManager } from 'typeorm';
import { insertPolicyDecisions } from '../policies/policies.repository';
import { APPROVED_STARTS_CHANNEL } from './approved-starts-channel';
import { terminalDeltas } from './terminal-effects';
import { balanceUpdatedEvent, statusUpdatedEvent, type TransactionRecord } from './transaction.record';
import { TransactionsRepository, type TransitionMove } from './transactions.repository';

export type VoteAction = 'approve' | 'reject';

/** An approved withdrawal still Submitted, and where the next page starts after it. */
export interface ApprovedStartCursor {
  id: string;
  /** Postgres' text of the timestamp (microseconds kept). */
  createdAt: string;
}

/** The result of one vote, decided under the approval row's lock. */
export type VoteOutcome =
  | { kind: 'no-approval' }
  | { kind: 'self' }
  | { kind: 'not-approver' }
  | { kind: 'closed'; status: string }
  | { kind: 'window-closed' }
  | { kind: 'repeat' }
  | { kind: 'already-voted' }
  | { kind: 'approved'; quorum: boolean; approvals: number; required: number }
  | { kind: 'rejected' };

interface LockedApproval {
  requestedBy: string;
  required: number;
  approvers: string[];
  status: string;
  windowClosed: boolean;
  transactionStatus: string;
}

/** The cancel move of a withdrawal whose approval ended without a quorum: hold released, events. */
export function approvalCancelMove(record: TransactionRecord): TransitionMove {
  return {
    next: 'Cancelled',
    patch: { terminal: true },
    deltas: terminalDeltas(record, 'Cancelled'),
    events: (t) => [
      statusUpdatedEvent(t, 'Submitted'),
      balanceUpdatedEvent(t.tenantId, t.vaultId, t.assetId),
    ],
  };
}

/**
 * The approval writes: a vote (approve or reject) and the expiry. Each runs in one database transaction holding
 * the approval row's lock (`FOR UPDATE`), so two votes never count past each other and a vote never races an
 * expiry. A rejection or an expiry moves the withdrawal to Cancelled in the same transaction (hold released,
 * `transaction.status.updated` and `balance.updated` through the outbox).
 */
@Injectable()
export class WithdrawalApprovalsRepository {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly transactions: TransactionsRepository,
  ) {}

  /**
   * The approval row and its withdrawal's row, both locked (`FOR UPDATE`, the approval first, as the expiry takes
   * them). The withdrawal's lock makes `transactionStatus` the status a move from here will find: a partner's
   * cancel (which locks that row) either committed before it (the vote then sees `Cancelled`) or waits for the vote.
   */
  private async lock(manager: EntityManager, transactionId: string): Promise<LockedApproval | undefined> {
    const rows: LockedApproval[] = await manager.query(
      `SELECT a."requested_by" AS "requestedBy", a."required", a."approvers", a."status",
              a."expires_at" <= now() AS "windowClosed", t."status" AS "transactionStatus"
       FROM "withdrawal_approvals" a JOIN "transactions" t ON t."id" = a."transaction_id"
       WHERE a."transaction_id" = $1 FOR UPDATE OF a, t`,
      [transactionId],
    );
    return rows[0];
  }

  /** True while the withdrawal waits for approvals: the machine must not move it. */
  async isPending(transactionId: string): Promise<boolean> {
    const rows: unknown[] = await this.db.query(
      `SELECT 1 FROM "withdrawal_approvals" WHERE "transaction_id" = $1 AND "status" = 'pending'`,
      [transactionId],
    );
    return rows.length > 0;
  }

  /**
   * Counts a vote. A vote that reaches the quorum wakes the worker's ApprovedStarts after its commit (a NOTIFY
   * in its own statement, never inside the vote's transaction): the approved withdrawal is started from
   * Postgres, and the request touches no queue (decision 0491).
   */
  async vote(
    record: TransactionRecord,
    keyId: string,
    action: VoteAction,
    text: string | null,
  ): Promise<VoteOutcome> {
    const outcome = await this.voteInTransaction(record, keyId, action, text);
    if (outcome.kind === 'approved' && outcome.quorum) notifyChannel(this.db, APPROVED_STARTS_CHANNEL);
    return outcome;
  }

  /**
   * Approved withdrawals whose machine has not moved them yet (approval `approved`, withdrawal still
   * `Submitted`), oldest first, after `after` (keyset on created_at, id): what ApprovedStarts enqueues. Read in
   * `transactions_unfinished_idx` order, so the cost follows the transactions in flight, not every transaction
   * or every approval ever decided.
   */
  async approvedNotStarted(limit: number, after?: ApprovedStartCursor): Promise<ApprovedStartCursor[]> {
    const params: unknown[] = [limit];
    let keyset = '';
    if (after) {
      params.push(after.createdAt, after.id);
      keyset = `AND (t."created_at", t."id") > ($2::timestamptz, $3::uuid)`;
    }
    return this.db.query(
      `SELECT t."id", t."created_at"::text AS "createdAt" FROM "transactions" t
       JOIN "withdrawal_approvals" a ON a."transaction_id" = t."id"
       WHERE t."completed_at" IS NULL AND t."status" = 'Submitted' AND a."status" = 'approved' ${keyset}
       ORDER BY t."created_at", t."id" LIMIT $1`,
      params,
    );
  }

  private voteInTransaction(
    record: TransactionRecord,
    keyId: string,
    action: VoteAction,
    text: string | null,
  ): Promise<VoteOutcome> {
    return this.db.transaction(async (manager): Promise<VoteOutcome> => {
      const a = await this.lock(manager, record.id);
      if (!a) return { kind: 'no-approval' };
      if (keyId === a.requestedBy) return { kind: 'self' };
      if (!a.approvers.includes(keyId)) return { kind: 'not-approver' };
      if (a.status === 'pending' && a.transactionStatus !== 'Submitted')
        return { kind: 'closed', status: 'cancelled' };
      if (a.status !== 'pending') {
        const [mine] = (await manager.query(
          `SELECT 1 FROM "policy_decisions" WHERE "transaction_id" = $1 AND "key_id" = $2 AND "kind" = 'approval'`,
          [record.id, keyId],
        )) as unknown[];
        // Repeating an approval that counted answers the current state (a retry after a lost answer).
        if (mine && action === 'approve') return { kind: 'repeat' };
        return { kind: 'closed', status: a.status };
      }
      if (a.windowClosed) return { kind: 'window-closed' };
      const [voted] = (await manager.query(
        `SELECT "kind" FROM "policy_decisions" WHERE "transaction_id" = $1 AND "key_id" = $2
           AND "kind" IN ('approval', 'rejection')`,
        [record.id, keyId],
      )) as { kind: string }[];
      if (voted) return action === 'approve' ? { kind: 'repeat' } : { kind: 'already-voted' };
      if (action === 'reject') {
        const reason = `Rejected by ${keyId}${text ? `: ${text}` : ''}`;
        await insertPolicyDecisions(manager, [
          {
            transactionId: record.id,
            kind: 'rejection',
            rule: 'approvals',
            outcome: 'rejected',
            keyId,
            policyVersion: null,
            detail: text ? { reason: text } : {},
          },
        ]);
        await this.close(manager, record.id, 'rejected', reason);
        const moved = await this.transactions.applyTransition(
          manager,
          record.id,
          'Submitted',
          approvalCancelMove(record),
        );
        if (!moved) throw new Error('A pending withdrawal left Submitted under its approval lock');
        return { kind: 'rejected' };
      }
      await insertPolicyDecisions(manager, [
        {
          transactionId: record.id,
          kind: 'approval',
          rule: 'approvals',
          outcome: 'approved',
          keyId,
          policyVersion: null,
          detail: text ? { note: text } : {},
        },
      ]);
      const [{ count }] = (await manager.query(
        `SELECT count(*)::int AS "count" FROM "policy_decisions" WHERE "transaction_id" = $1 AND "kind" = 'approval'`,
        [record.id],
      )) as { count: number }[];
      const quorum = count >= a.required;
      if (quorum) {
        await insertPolicyDecisions(manager, [
          {
            transactionId: record.id,
            kind: 'quorum',
            rule: 'approvals',
            outcome: 'approved',
            keyId: null,
            policyVersion: null,
            detail: { approvals: count, required: a.required },
          },
        ]);
        await this.close(manager, record.id, 'approved', null);
        // ApprovedStarts starts it from this commit; the stuck-transaction sweeper, measuring from here, is the
        // backstop after its threshold.
        await manager.query(`UPDATE "transactions" SET "updated_at" = now() WHERE "id" = $1`, [record.id]);
      }
      return { kind: 'approved', quorum, approvals: count, required: a.required };
    });
  }

  private async close(manager: EntityManager, id: string, status: string, reason: string | null) {
    await manager.query(
      `UPDATE "withdrawal_approvals" SET "status" = $2, "reason" = $3, "decided_at" = now() WHERE "transaction_id" = $1`,
      [id, status, reason],
    );
  }

  /**
   * Expires up to `limit` approval requests whose window has closed: each withdrawal is Cancelled with its hold
   * released (a withdrawal the partner already cancelled only has its request closed). Replicas share the work:
   * rows another transaction holds are skipped. Returns the ids whose withdrawal this call cancelled.
   */
  expireDue(limit: number): Promise<string[]> {
    return this.db.transaction(async (manager) => {
      const due: { id: string; required: number; approvals: number }[] = await manager.query(
        `SELECT a."transaction_id" AS "id", a."required",
           (SELECT count(*)::int FROM "policy_decisions" d
            WHERE d."transaction_id" = a."transaction_id" AND d."kind" = 'approval') AS "approvals"
         FROM "withdrawal_approvals" a
         WHERE a."status" = 'pending' AND a."expires_at" <= now()
         ORDER BY a."expires_at" LIMIT $1 FOR UPDATE OF a SKIP LOCKED`,
        [limit],
      );
      const cancelled: string[] = [];
      for (const d of due) {
        const record = await this.transactions.loadIn(manager, d.id);
        if (!record || record.status !== 'Submitted') {
          await this.close(manager, d.id, 'cancelled', 'The withdrawal was cancelled before its approvals');
          continue;
        }
        const reason = `Approval window expired with ${d.approvals} of ${d.required} approvals`;
        await insertPolicyDecisions(manager, [
          {
            transactionId: d.id,
            kind: 'expiry',
            rule: 'approvals',
            outcome: 'expired',
            keyId: null,
            policyVersion: null,
            detail: { approvals: d.approvals, required: d.required },
          },
        ]);
        await this.close(manager, d.id, 'expired', reason);
        if (await this.transactions.applyTransition(manager, d.id, 'Submitted', approvalCancelMove(record))) {
          cancelled.push(d.id);
        }
      }
      return cancelled;
    });
  }
}
