import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { CustodyTransactionStatus } from '@tessera/contracts';
import type { DataSource, EntityManager } from 'typeorm';

/** A transaction that has sat in one non-terminal status for longer than the sweep threshold. */
export interface StuckTransaction {
  id: string;
  status: CustodyTransactionStatus;
  /** How long ago it entered its status, in milliseconds (database clock). */
  ageMs: number;
  assetConfirmations: number;
}

/** Statuses the machine still has to move out of. */
export const IN_FLIGHT_STATUSES: CustodyTransactionStatus[] = [
  'Submitted',
  'PendingSignature',
  'Broadcasting',
  'Confirming',
];

/** The same list as SQL. */
export const IN_FLIGHT_SQL = IN_FLIGHT_STATUSES.map((s) => `'${s}'`).join(', ');

const SWEEP_LOCK = 'tessera:custody:stuck-sweep';

@Injectable()
export class StuckTransactionsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Runs `sweep` holding a transaction-scoped advisory lock, so one worker replica sweeps at a time; the
   * others get `false` at once (pg_try_advisory_xact_lock does not wait).
   */
  async withSweepLock(sweep: (page: StuckPager) => Promise<void>): Promise<boolean> {
    return this.db.transaction(async (manager) => {
      const [{ locked }] = (await manager.query(
        `SELECT pg_try_advisory_xact_lock(hashtext($1)) AS "locked"`,
        [SWEEP_LOCK],
      )) as { locked: boolean }[];
      if (!locked) return false;
      await sweep(new StuckPager(manager));
      return true;
    });
  }
}

/** Pages through in-flight transactions untouched for `olderThanMs`, oldest first (keyset on updated_at, id). */
export class StuckPager {
  private after: { updatedAt: string; id: string } | undefined;

  constructor(private readonly manager: EntityManager) {}

  async next(olderThanMs: number, limit: number): Promise<StuckTransaction[]> {
    const params: unknown[] = [olderThanMs, limit];
    let keyset = '';
    if (this.after) {
      params.push(this.after.updatedAt, this.after.id);
      keyset = `AND (t."updated_at", t."id") > ($3::timestamptz, $4::uuid)`;
    }
    const rows = (await this.manager.query(
      `SELECT t."id", t."status", t."updated_at"::text AS "updatedAt",
              (extract(epoch FROM now() - t."updated_at") * 1000)::float8 AS "ageMs",
              a."confirmations" AS "assetConfirmations"
       FROM "transactions" t JOIN "assets" a ON a."id" = t."asset_id"
       -- transactions_unfinished_idx: a row untouched since the cutoff was created before it (decision 0430).
       WHERE t."completed_at" IS NULL AND t."created_at" < now() - make_interval(secs => $1::float8 / 1000)
         AND t."status" IN (${IN_FLIGHT_SQL})
         AND t."updated_at" < now() - make_interval(secs => $1::float8 / 1000) ${keyset}
         -- A withdrawal waiting for approvals is not stuck: the quorum starts it (decision 0220).
         AND NOT EXISTS (SELECT 1 FROM "withdrawal_approvals" wa
                         WHERE wa."transaction_id" = t."id" AND wa."status" = 'pending')
       ORDER BY t."updated_at", t."id" LIMIT $2`,
      params,
    )) as (StuckTransaction & { updatedAt: string })[];
    const last = rows[rows.length - 1];
    if (last) this.after = { updatedAt: last.updatedAt, id: last.id };
    return rows.map(({ id, status, ageMs, assetConfirmations }) => ({
      id,
      status,
      ageMs,
      assetConfirmations,
    }));
  }
}
