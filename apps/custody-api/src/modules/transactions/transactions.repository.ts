import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { CustodyTransactionStatus } from '@tessera/contracts';
import { appendToOutbox, type OutboxEvent } from '@tessera/platform';
import type { DataSource, EntityManager } from 'typeorm';
import type { Caller } from '../../common/caller';
import { randomUUID } from 'node:crypto';
import { applyBalanceDeltas, type BalanceDelta, InsufficientFundsError, rowsOf } from '../ledger/ledger';
import type { TransactionRecord } from './transaction.record';

export interface IdempotencyClaim {
  endpoint: string;
  key: string;
  requestHash: string;
}

export interface StoredResponse {
  requestHash: string;
  statusCode: number;
  response: Record<string, unknown>;
}

/** One move of the machine: the next status, the row patch, its ledger effect and its events. */
export interface TransitionMove {
  next: CustodyTransactionStatus;
  patch: { txHash?: string | null; failureReason?: string | null; terminal: boolean };
  deltas: BalanceDelta[];
  events: (updated: TransactionRecord) => OutboxEvent[];
}

export type CreateOutcome = { created: true } | { created: false; existing: StoredResponse };

export interface TransactionFilters {
  take: number;
  after?: { createdAt: string; id: string };
  type?: string;
  status?: string;
  vaultId?: string;
  walletId?: string;
  since?: string;
}

const RECORD_SELECT = `
  SELECT t."id", t."tenant_id" AS "tenantId", t."environment", t."type", t."status", t."vault_id" AS "vaultId",
         v."external_id" AS "vaultExternalId", v."name" AS "vaultName", t."asset_id" AS "assetId",
         a."symbol" AS "assetSymbol", a."network" AS "assetNetwork", a."decimals" AS "assetDecimals",
         a."confirmations" AS "assetConfirmations", t."wallet_id" AS "walletId",
         t."source_wallet_id" AS "sourceWalletId", t."destination_wallet_id" AS "destinationWalletId",
         t."amount", t."source_address" AS "sourceAddress", t."destination_address" AS "destinationAddress",
         t."destination_tag" AS "destinationTag", t."tx_hash" AS "txHash", t."network_fee" AS "networkFee",
         t."fee_currency" AS "feeCurrency", t."note", t."failure_reason" AS "failureReason",
         t."created_at" AS "createdAt", t."updated_at" AS "updatedAt", t."completed_at" AS "completedAt"
  FROM "transactions" t
  JOIN "vaults" v ON v."id" = t."vault_id"
  JOIN "assets" a ON a."id" = t."asset_id"`;

const IDEMPOTENCY_TTL = `interval '24 hours'`;
const CHECK_VIOLATION = '23514';
const DEADLOCK = '40P01';
const SERIALIZATION = '40001';

@Injectable()
export class TransactionsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async findStoredResponse(caller: Caller, claim: IdempotencyClaim): Promise<StoredResponse | undefined> {
    const rows: StoredResponse[] = await this.db.query(
      `SELECT "request_hash" AS "requestHash", "status_code" AS "statusCode", "response"
       FROM "idempotency_keys" WHERE "tenant_id" = $1 AND "environment" = $2 AND "endpoint" = $3 AND "key" = $4
         AND "created_at" > now() - ${IDEMPOTENCY_TTL}`,
      [caller.tenantId, caller.environment, claim.endpoint, claim.key],
    );
    return rows[0];
  }

  /**
   * Creates a transaction in ONE statement (so one round trip and row locks held only for its duration):
   * reserve the Idempotency-Key with the response already built, apply the balance deltas, insert the
   * transaction, its ledger entries and its outbox events. Every part is conditioned on the reservation,
   * so a key already held by a committed request changes nothing and its stored response is returned.
   * A concurrent request with the same key waits on the key's primary key until the first commits.
   * The balance rows are locked first, in wallet-id order (SELECT … ORDER BY … FOR UPDATE), so two
   * transfers in opposite directions cannot deadlock. A debit below zero violates the balances CHECK constraint: the whole statement fails
   * (InsufficientFundsError) and nothing is created.
   */
  async create(
    caller: Caller,
    record: TransactionRecord,
    deltas: BalanceDelta[],
    events: OutboxEvent[],
    idempotency: (IdempotencyClaim & { response: Record<string, unknown> }) | undefined,
  ): Promise<CreateOutcome> {
    const params: unknown[] = [];
    const p = (value: unknown, cast = '') => {
      params.push(value);
      return `$${params.length}${cast}`;
    };
    const claim = idempotency
      ? `INSERT INTO "idempotency_keys" AS k ("tenant_id", "environment", "endpoint", "key", "request_hash",
           "status_code", "response")
         VALUES (${p(caller.tenantId)}, ${p(caller.environment)}, ${p(idempotency.endpoint)}, ${p(idempotency.key)},
           ${p(idempotency.requestHash)}, 201, ${p(JSON.stringify(idempotency.response), '::jsonb')})
         ON CONFLICT ("tenant_id", "environment", "endpoint", "key") DO UPDATE
           SET "request_hash" = EXCLUDED."request_hash", "response" = EXCLUDED."response", "status_code" = 201,
               "created_at" = now()
           WHERE k."created_at" <= now() - ${IDEMPOTENCY_TTL}
         RETURNING 1 AS "ok"`
      : `SELECT 1 AS "ok"`;
    const ordered = [...deltas].sort((a, b) =>
      a.walletId < b.walletId ? -1 : a.walletId > b.walletId ? 1 : 0,
    );
    const n = (v: bigint | undefined) => p(String(v ?? 0n), '::numeric');
    const deltaRows = ordered
      .map(
        (d) =>
          `(${p(d.walletId, '::uuid')}, ${n(d.total)}, ${n(d.available)}, ${n(d.pending)}, ${n(d.locked)})`,
      )
      .join(', ');
    const ledgerRows = deltas
      .map(
        (d) =>
          `(${p(d.walletId, '::uuid')}, ${p(record.id, '::uuid')}, ${p(d.kind)}, ${n(d.total)}, ${n(d.available)}, ` +
          `${n(d.pending)}, ${n(d.locked)})`,
      )
      .join(', ');
    const now = new Date();
    const outboxRows = events
      .map(
        (e) =>
          `(${p(randomUUID(), '::uuid')}, ${p(e.tenantId)}, ${p(e.eventType)}, ${p(e.entityType)}, ${p(e.entityId)}, ` +
          `${p(JSON.stringify(e.data), '::jsonb')}, ${p(e.occurredAt ?? now, '::timestamptz')})`,
      )
      .join(', ');
    const r = record;
    const statement = `
      WITH claim AS (${claim}),
      locked AS (
        SELECT b."wallet_id" FROM "balances" b
        WHERE b."wallet_id" = ANY(${p(
          ordered.map((d) => d.walletId),
          '::uuid[]',
        )}) AND EXISTS (SELECT 1 FROM claim)
        ORDER BY b."wallet_id" FOR UPDATE
      ),
      moved AS (
        UPDATE "balances" b SET "total" = b."total" + d.t, "available" = b."available" + d.a,
          "pending" = b."pending" + d.p, "locked" = b."locked" + d.l, "updated_at" = now()
        FROM (VALUES ${deltaRows}) AS d(wallet_id, t, a, p, l)
        WHERE b."wallet_id" = d.wallet_id AND (SELECT count(*) FROM locked) = ${ordered.length}
        RETURNING b."wallet_id"
      ),
      tx AS (
        INSERT INTO "transactions" ("id", "tenant_id", "environment", "type", "status", "vault_id", "asset_id",
          "wallet_id", "source_wallet_id", "destination_wallet_id", "amount", "source_address",
          "destination_address", "destination_tag", "tx_hash", "network_fee", "fee_currency", "note",
          "created_at", "updated_at")
        SELECT ${p(r.id, '::uuid')}, ${p(r.tenantId, '::uuid')}, ${p(r.environment)}, ${p(r.type)}, ${p(r.status)},
          ${p(r.vaultId, '::uuid')}, ${p(r.assetId, '::uuid')}, ${p(r.walletId, '::uuid')},
          ${p(r.sourceWalletId, '::uuid')}, ${p(r.destinationWalletId, '::uuid')}, ${p(r.amount, '::numeric')},
          ${p(r.sourceAddress)}, ${p(r.destinationAddress)}, ${p(r.destinationTag)}, ${p(r.txHash)},
          ${p(r.networkFee, '::numeric')}, ${p(r.feeCurrency)}, ${p(r.note)}, ${p(r.createdAt, '::timestamptz')},
          ${p(r.createdAt, '::timestamptz')}
        WHERE EXISTS (SELECT 1 FROM claim)
        RETURNING "id"
      ),
      ledger AS (
        INSERT INTO "ledger_entries" ("wallet_id", "transaction_id", "kind", "total_delta", "available_delta",
          "pending_delta", "locked_delta")
        SELECT * FROM (VALUES ${ledgerRows}) AS v WHERE EXISTS (SELECT 1 FROM claim)
        RETURNING 1
      ),
      events AS (
        INSERT INTO "outbox" ("id", "tenant_id", "event_type", "entity_type", "entity_id", "data", "occurred_at")
        SELECT * FROM (VALUES ${outboxRows}) AS v WHERE EXISTS (SELECT 1 FROM claim)
        RETURNING 1
      )
      SELECT (SELECT count(*) FROM claim)::int AS "claimed", (SELECT count(*) FROM moved)::int AS "moved",
             (SELECT count(*) FROM tx)::int AS "inserted"`;
    let result: { claimed: number; moved: number }[];
    for (let attempt = 1; ; attempt++) {
      try {
        result = await this.db.query(statement, params);
        break;
      } catch (err) {
        const failure = err as { driverError?: { code?: string }; code?: string };
        const code = failure.driverError?.code ?? failure.code;
        if (code === CHECK_VIOLATION) throw new InsufficientFundsError(deltas[0]?.walletId ?? '');
        if ((code === DEADLOCK || code === SERIALIZATION) && attempt < 3) continue;
        throw err;
      }
    }
    if (result[0].claimed === 0) {
      const existing = await this.findStoredResponse(caller, idempotency!);
      if (!existing) throw new Error('Idempotency key vanished between conflict and read');
      return { created: false, existing };
    }
    if (result[0].moved !== deltas.length) throw new Error('A balance row is missing for a wallet');
    return { created: true };
  }

  async find(caller: Caller, id: string): Promise<TransactionRecord | undefined> {
    const rows: TransactionRecord[] = await this.db.query(
      `${RECORD_SELECT} WHERE t."id" = $1 AND t."tenant_id" = $2 AND t."environment" = $3`,
      [id, caller.tenantId, caller.environment],
    );
    return rows[0];
  }

  /** For the worker role: a transaction by id, any tenant. */
  async load(id: string): Promise<TransactionRecord | undefined> {
    const rows: TransactionRecord[] = await this.db.query(`${RECORD_SELECT} WHERE t."id" = $1`, [id]);
    return rows[0];
  }

  list(caller: Caller, f: TransactionFilters): Promise<TransactionRecord[]> {
    const params: unknown[] = [caller.tenantId, caller.environment];
    const where = [`t."tenant_id" = $1`, `t."environment" = $2`];
    const add = (sql: (n: string) => string, value: unknown) => {
      params.push(value);
      where.push(sql(`$${params.length}`));
    };
    if (f.type) add((n) => `t."type" = ${n}`, f.type);
    if (f.status) add((n) => `t."status" = ${n}`, f.status);
    if (f.vaultId) add((n) => `t."vault_id" = ${n}`, f.vaultId);
    if (f.walletId) {
      add(
        (n) => `(t."wallet_id" = ${n} OR t."source_wallet_id" = ${n} OR t."destination_wallet_id" = ${n})`,
        f.walletId,
      );
    }
    if (f.since) add((n) => `t."created_at" >= ${n}::timestamptz`, f.since);
    if (f.after) {
      params.push(f.after.createdAt, f.after.id);
      where.push(`(t."created_at", t."id") < ($${params.length - 1}::timestamptz, $${params.length}::uuid)`);
    }
    params.push(f.take);
    return this.db.query(
      `${RECORD_SELECT} WHERE ${where.join(' AND ')} ORDER BY t."created_at" DESC, t."id" DESC LIMIT $${params.length}`,
      params,
    );
  }

  /**
   * Compare-and-set move of the machine, in one database transaction with its ledger effect and events:
   * UPDATE … WHERE status = expected. Returns the updated record, or undefined when another worker moved
   * the transaction first (nothing is written then).
   */
  async transition(
    id: string,
    expected: CustodyTransactionStatus,
    next: CustodyTransactionStatus,
    patch: TransitionMove['patch'],
    deltas: BalanceDelta[],
    events: (updated: TransactionRecord) => OutboxEvent[],
  ): Promise<TransactionRecord | undefined> {
    return this.db.transaction((manager) =>
      this.applyTransition(manager, id, expected, { next, patch, deltas, events }),
    );
  }

  /**
   * A move whose step has an outside effect (a broadcast) that must not race another move such as a
   * cancel: the row is locked first (SELECT … FOR UPDATE, still in `expected`), `decide` runs while the lock
   * is held, and its move is applied in the same database transaction. A concurrent compare-and-set waits for
   * the lock and then finds the new status. Undefined when the transaction had already left `expected`
   * (`decide` is not called then).
   */
  async transitionWhileLocked(
    id: string,
    expected: CustodyTransactionStatus,
    decide: (locked: TransactionRecord) => Promise<TransitionMove>,
  ): Promise<TransactionRecord | undefined> {
    return this.db.transaction(async (manager) => {
      const [locked] = (await manager.query(
        `${RECORD_SELECT} WHERE t."id" = $1 AND t."status" = $2 FOR UPDATE OF t`,
        [id, expected],
      )) as TransactionRecord[];
      if (!locked) return undefined;
      return this.applyTransition(manager, id, expected, await decide(locked));
    });
  }

  private async applyTransition(
    manager: EntityManager,
    id: string,
    expected: CustodyTransactionStatus,
    move: TransitionMove,
  ): Promise<TransactionRecord | undefined> {
    const { next, patch, deltas, events } = move;
    const moved = rowsOf<{ id: string }>(
      await manager.query(
        `UPDATE "transactions" SET "status" = $3, "updated_at" = now(),
           "tx_hash" = COALESCE($4, "tx_hash"), "failure_reason" = COALESCE($5, "failure_reason"),
           "completed_at" = CASE WHEN $6::boolean THEN now() ELSE "completed_at" END
         WHERE "id" = $1 AND "status" = $2 RETURNING "id"`,
        [id, expected, next, patch.txHash ?? null, patch.failureReason ?? null, patch.terminal],
      ),
    );
    if (moved.length === 0) return undefined;
    await applyBalanceDeltas(manager, deltas);
    const [updated] = (await manager.query(`${RECORD_SELECT} WHERE t."id" = $1`, [
      id,
    ])) as TransactionRecord[];
    await appendToOutbox(manager, events(updated));
    return updated;
  }
}
