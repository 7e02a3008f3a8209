import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { afterCursor, type PageCursor } from '../../common/cursor';
import { INTERNAL_TRANSFER_KINDS } from '../ledger/ledger';
import { ReconciliationFindingEntity } from './entities/reconciliation-finding.entity';
import { ReconciliationRunEntity } from './entities/reconciliation-run.entity';

const TERMINAL = `('Completed', 'Failed', 'Cancelled')`;

export interface Buckets {
  total: string;
  available: string;
  pending: string;
  locked: string;
}

/** A wallet whose balance row differs from the sum of its ledger entries in at least one bucket. */
export interface LedgerMismatch {
  walletId: string;
  tenantId: string;
  assetSymbol: string;
  assetDecimals: number;
  balance: Buckets;
  entries: Buckets;
}

/** A live wallet on the EVM chain with what the ledger says and what is still moving (base units). */
export interface ChainWallet {
  walletId: string;
  tenantId: string;
  assetSymbol: string;
  assetDecimals: number;
  addresses: string[];
  /** Settled funds per the balance row. */
  total: string;
  /**
   * Net of the wallet's internal transfers (in minus out, reversals included): ledger moves between wallets of
   * the custodian that move nothing on the chain, so its addresses hold `total − internalNet` (decision 0444).
   */
  internalNet: string;
  /** Deposits mined by the read block (not reorged), transaction not terminal: on chain, not yet credited. */
  unconfirmedIn: string;
  /** Withdrawals broadcast (a tx hash) and not terminal: on chain once mined, not yet posted. */
  inFlightOut: string;
  /** Fees held for those withdrawals on this wallet (native sends): spent on chain once mined. */
  inFlightFees: string;
  /** Native withdrawals this wallet ever paid fees for. */
  feePayingSends: number;
}

/** The only SQL of reconciliation: the ledger's own consistency, the chain wallets' in-flight sums, runs. */
@Injectable()
export class ReconciliationRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async walletCount(tenantId: string | null): Promise<number> {
    const [row] = await this.db.query(
      `SELECT count(*)::int AS n FROM "balances" b JOIN "wallets" w ON w."id" = b."wallet_id"
       WHERE $1::uuid IS NULL OR w."tenant_id" = $1`,
      [tenantId],
    );
    return row.n as number;
  }

  /** Live wallets on the `ethereum` network: the ones a run without a node cannot check against the chain. */
  async liveEvmWalletCount(tenantId: string | null): Promise<number> {
    const [row] = await this.db.query(
      `SELECT count(*)::int AS n FROM "wallets" w JOIN "assets" s ON s."id" = w."asset_id"
       WHERE w."environment" = 'production' AND s."network" = 'ethereum' AND ($1::uuid IS NULL OR w."tenant_id" = $1)`,
      [tenantId],
    );
    return row.n as number;
  }

  /**
   * Wallets whose balance row is not the sum of their ledger entries (every bucket compared). Every entry of the
   * wallets checked is summed, not a total kept beside them: this check is what catches a balance row and a kept
   * total drifting together (decision 0454). A tenant's run sums only its own wallets' entries.
   */
  async ledgerMismatches(tenantId: string | null): Promise<LedgerMismatch[]> {
    const rows: (Record<string, string> & { assetDecimals: number })[] = await this.db.query(
      `SELECT w."id" AS "walletId", w."tenant_id" AS "tenantId", s."symbol" AS "assetSymbol",
              s."decimals" AS "assetDecimals",
              b."total"::text AS bt, b."available"::text AS ba, b."pending"::text AS bp, b."locked"::text AS bl,
              COALESCE(e.t, 0)::text AS et, COALESCE(e.a, 0)::text AS ea, COALESCE(e.p, 0)::text AS ep,
              COALESCE(e.l, 0)::text AS el
       FROM "balances" b
       JOIN "wallets" w ON w."id" = b."wallet_id"
       JOIN "assets" s ON s."id" = w."asset_id"
       LEFT JOIN (
         SELECT "wallet_id", SUM("total_delta") AS t, SUM("available_delta") AS a, SUM("pending_delta") AS p,
                SUM("locked_delta") AS l
         FROM "ledger_entries"
         WHERE $1::uuid IS NULL OR "wallet_id" IN (SELECT t."id" FROM "wallets" t WHERE t."tenant_id" = $1)
         GROUP BY "wallet_id") e ON e."wallet_id" = b."wallet_id"
       WHERE ($1::uuid IS NULL OR w."tenant_id" = $1)
         AND (b."total", b."available", b."pending", b."locked")
             IS DISTINCT FROM (COALESCE(e.t, 0), COALESCE(e.a, 0), COALESCE(e.p, 0), COALESCE(e.l, 0))
       ORDER BY w."id"`,
      [tenantId],
    );
    return rows.map((r) => ({
      walletId: r.walletId!,
      tenantId: r.tenantId!,
      assetSymbol: r.assetSymbol!,
      assetDecimals: r.assetDecimals,
      balance: { total: r.bt!, available: r.ba!, pending: r.bp!, locked: r.bl! },
      entries: { total: r.et!, available: r.ea!, pending: r.ep!, locked: r.el! },
    }));
  }

  /** Live wallets on the `ethereum` network of these symbols, with their addresses and in-flight sums. */
  chainWallets(tenantId: string | null, symbols: string[], atBlock: bigint): Promise<ChainWallet[]> {
    return this.db.query(
      `SELECT w."id" AS "walletId", w."tenant_id" AS "tenantId", s."symbol" AS "assetSymbol",
              s."decimals" AS "assetDecimals",
              ARRAY(SELECT lower(a."address") FROM "wallet_addresses" a WHERE a."wallet_id" = w."id"
                    ORDER BY a."created_at") AS "addresses",
              COALESCE(b."total", 0)::text AS "total",
              (SELECT COALESCE(SUM(l."total_delta"), 0)::text FROM "ledger_entries" l
                WHERE l."wallet_id" = w."id" AND l."kind" = ANY($4)
              ) AS "internalNet",
              (SELECT COALESCE(SUM(t."amount"), 0)::text FROM "transactions" t
                 JOIN "evm_transfers" e ON e."transaction_id" = t."id"
                WHERE t."wallet_id" = w."id" AND t."type" = 'Deposit' AND e."direction" = 'in'
                  AND NOT e."reorged" AND e."block_number" <= $3 AND t."status" NOT IN ${TERMINAL}
              ) AS "unconfirmedIn",
              (SELECT COALESCE(SUM(t."amount"), 0)::text FROM "transactions" t
                 JOIN "evm_transfers" e ON e."transaction_id" = t."id"
                WHERE t."wallet_id" = w."id" AND t."type" = 'Withdrawal' AND e."direction" = 'out'
                  AND e."tx_hash" IS NOT NULL AND t."status" NOT IN ${TERMINAL}
              ) AS "inFlightOut",
              (SELECT COALESCE(SUM(e."fee_held"), 0)::text FROM "evm_transfers" e
                 JOIN "transactions" t ON t."id" = e."transaction_id"
                WHERE e."fee_wallet_id" = w."id" AND e."direction" = 'out' AND e."tx_hash" IS NOT NULL
                  AND t."status" NOT IN ${TERMINAL}
              ) AS "inFlightFees",
              (SELECT count(*)::int FROM "evm_transfers" e
                WHERE e."fee_wallet_id" = w."id" AND e."direction" = 'out') AS "feePayingSends"
       FROM "wallets" w
       JOIN "assets" s ON s."id" = w."asset_id"
       LEFT JOIN "balances" b ON b."wallet_id" = w."id"
       WHERE w."environment" = 'production' AND s."network" = 'ethereum' AND s."symbol" = ANY($2)
         AND ($1::uuid IS NULL OR w."tenant_id" = $1)
       ORDER BY w."id"`,
      [tenantId, symbols, String(atBlock), INTERNAL_TRANSFER_KINDS],
    );
  }

  /** The run and its findings, in one transaction. */
  async saveRun(run: ReconciliationRunEntity, findings: ReconciliationFindingEntity[]): Promise<void> {
    await this.db.transaction(async (manager) => {
      await manager.insert(ReconciliationRunEntity, run);
      if (findings.length > 0) await manager.insert(ReconciliationFindingEntity, findings as never);
    });
  }

  findRun(id: string): Promise<ReconciliationRunEntity | null> {
    return this.db.getRepository(ReconciliationRunEntity).findOneBy({ id });
  }

  findings(runId: string): Promise<ReconciliationFindingEntity[]> {
    return this.db
      .getRepository(ReconciliationFindingEntity)
      .find({ where: { runId }, order: { explained: 'ASC', walletId: 'ASC', check: 'ASC' } });
  }

  /** Runs newest first, after `after` (a page cursor) when given. */
  listRuns(take: number, after?: PageCursor): Promise<ReconciliationRunEntity[]> {
    const query = this.db
      .getRepository(ReconciliationRunEntity)
      .createQueryBuilder('r')
      .orderBy('r.startedAt', 'DESC')
      .addOrderBy('r.id', 'DESC')
      .limit(take);
    if (after)
      query.where(afterCursor('r', 'reconciliation_runs', { time: ':time', id: ':id' }, 'started_at'), {
        time: after.createdAt,
        id: after.id,
      });
    return query.getMany();
  }

  /**
   * Runs `work` only if no other replica holds the scheduled reconciliation's advisory lock (session-level,
   * on one pooled connection held for the duration). False when another replica is at it.
   */
  async withScheduleLock(work: () => Promise<void>): Promise<boolean> {
    const runner = this.db.createQueryRunner();
    await runner.connect();
    try {
      const [{ locked }] = await runner.query(
        `SELECT pg_try_advisory_lock(hashtext('tessera:custody:reconciliation')) AS locked`,
      );
      if (!locked) return false;
      try {
        await work();
      } finally {
        await runner.query(`SELECT pg_advisory_unlock(hashtext('tessera:custody:reconciliation'))`);
      }
      return true;
    } finally {
      await runner.release();
    }
  }
}
