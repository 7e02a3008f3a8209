import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Batcher, isDataError, type OutboxEvent, sqlState } from '@tessera/platform';
import { randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import type { Caller } from '../../common/caller';
import type { BalanceDelta } from '../ledger/ledger';
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

/** One transaction to create with its ledger effect, events and (optionally) its Idempotency-Key. */
export interface NewTransaction {
  caller: Caller;
  record: TransactionRecord;
  deltas: BalanceDelta[];
  events: OutboxEvent[];
  idempotency?: IdempotencyClaim & { response: Record<string, unknown> };
}

export type CreateOutcome =
  | { created: true }
  | { created: false; existing: StoredResponse }
  | { created: false; insufficientFunds: string };

interface Buckets {
  total: bigint;
  available: bigint;
  pending: bigint;
  locked: bigint;
}

const BUCKETS = ['total', 'available', 'pending', 'locked'] as const;
const MAX_BATCH = 256;
const RETRYABLE = new Set(['40P01', '40001']); // deadlock, serialization failure

/** A wallet of the batch has no balance row: that request's fault, not the batch's. */
class MissingBalanceRowError extends Error {
  constructor() {
    super('A balance row is missing for a wallet');
  }
}
const IDEMPOTENCY_TTL = `interval '24 hours'`;

const claimKey = (t: NewTransaction) =>
  t.idempotency
    ? `${t.caller.tenantId}|${t.caller.environment}|${t.idempotency.endpoint}|${t.idempotency.key}`
    : undefined;

/**
 * Creates transactions by group commit. Concurrent requests are written together in ONE database
 * transaction: reserve the Idempotency-Keys, lock every balance row the batch touches (wallet-id order,
 * so batches in flight at once, here or on other replicas, cannot deadlock on them), decide each item's funds in order
 * against the locked balances, then one statement applies the summed deltas per wallet and inserts the
 * transactions, ledger entries and outbox events. Requests with one Idempotency-Key never share a
 * batch, so the second one finds the first one's stored response. The balances CHECK constraints stay
 * the last line of defence: a violation fails the batch, and each item is then retried alone.
 * Batching is libs/platform's `Batcher` (docs/decisions/0204).
 */
@Injectable()
export class TransactionWriter {
  private readonly commits = new Batcher<NewTransaction, CreateOutcome>({
    run: (items) => this.writeBatch(items),
    maxBatchSize: MAX_BATCH,
    // The second batch reserves its keys while the first holds the hot balance rows.
    maxConcurrentBatches: 2,
    conflictKey: claimKey,
    // One request's bad data fails the whole statement: rerun each alone so it fails only itself.
    retryAlone: (err) => isDataError(err) || err instanceof MissingBalanceRowError,
  });

  constructor(@InjectDataSource() private readonly db: DataSource) {}

  create(item: NewTransaction): Promise<CreateOutcome> {
    return this.commits.submit(item);
  }

  private async writeBatch(items: NewTransaction[]): Promise<CreateOutcome[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.db.transaction((manager) => this.writeInTransaction(manager, items));
      } catch (err) {
        if (RETRYABLE.has(sqlState(err)) && attempt < 3) continue;
        throw err;
      }
    }
  }

  private async writeInTransaction(
    manager: EntityManager,
    items: NewTransaction[],
  ): Promise<CreateOutcome[]> {
    // Keys first: a batch waiting for the hot balance rows already holds its reservations, so the
    // second batch in flight does that work while the first holds the rows.
    const claimed = await claimKeys(manager, items);
    const balances = await lockBalances(manager, items);
    const outcomes: (CreateOutcome | undefined)[] = [];
    const accepted: NewTransaction[] = [];
    const released: NewTransaction[] = [];
    const unclaimed: number[] = [];
    items.forEach((item, i) => {
      const key = claimKey(item);
      if (key !== undefined && !claimed.has(key)) {
        unclaimed.push(i);
        outcomes.push(undefined); // answered from the stored response below
        return;
      }
      const short = applyIfFunded(balances, item.deltas);
      if (short) {
        if (key !== undefined) released.push(item);
        outcomes.push({ created: false, insufficientFunds: short });
        return;
      }
      accepted.push(item);
      outcomes.push({ created: true });
    });
    if (unclaimed.length > 0) {
      const stored = await storedResponses(
        manager,
        unclaimed.map((i) => items[i]!),
      );
      for (const i of unclaimed) {
        const existing = stored.get(claimKey(items[i]!)!);
        if (!existing) throw new Error('Idempotency key vanished between conflict and read');
        outcomes[i] = { created: false, existing };
      }
    }
    if (accepted.length > 0 || released.length > 0) await writeAccepted(manager, accepted, released);
    return outcomes as CreateOutcome[];
  }
}

/** Locks the batch's balance rows in wallet-id order and reads them. */
async function lockBalances(manager: EntityManager, items: NewTransaction[]): Promise<Map<string, Buckets>> {
  const ids = [...new Set(items.flatMap((t) => t.deltas.map((d) => d.walletId)))].sort();
  const rows: ({ walletId: string } & Record<(typeof BUCKETS)[number], string>)[] = await manager.query(
    `SELECT "wallet_id" AS "walletId", "total"::text, "available"::text, "pending"::text, "locked"::text
     FROM "balances" WHERE "wallet_id" = ANY($1::uuid[]) ORDER BY "wallet_id" FOR UPDATE`,
    [ids],
  );
  const balances = new Map<string, Buckets>();
  for (const r of rows) {
    balances.set(r.walletId, {
      total: BigInt(r.total),
      available: BigInt(r.available),
      pending: BigInt(r.pending),
      locked: BigInt(r.locked),
    });
  }
  if (balances.size !== ids.length) throw new MissingBalanceRowError();
  return balances;
}

/**
 * Reserves the Idempotency-Keys with the response already built. A key held by a committed request
 * (within 24 h) is not returned; one held by a request still in flight makes this statement wait
 * for it. Returns the keys this batch now holds.
 */
async function claimKeys(manager: EntityManager, items: NewTransaction[]): Promise<Set<string>> {
  const claims = items.filter((t) => t.idempotency);
  if (claims.length === 0) return new Set();
  const rows: { k: string }[] = await manager.query(
    `INSERT INTO "idempotency_keys" AS k ("tenant_id", "environment", "endpoint", "key", "request_hash",
       "status_code", "response")
     SELECT u.t, u.e, u.ep, u.k, u.h, 201, u.r
     FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::jsonb[]) AS u(t, e, ep, k, h, r)
     ON CONFLICT ("tenant_id", "environment", "endpoint", "key") DO UPDATE
       SET "request_hash" = EXCLUDED."request_hash", "response" = EXCLUDED."response", "status_code" = 201,
           "created_at" = now()
       WHERE k."created_at" <= now() - ${IDEMPOTENCY_TTL}
     RETURNING k."tenant_id" || '|' || k."environment" || '|' || k."endpoint" || '|' || k."key" AS "k"`,
    [
      claims.map((t) => t.caller.tenantId),
      claims.map((t) => t.caller.environment),
      claims.map((t) => t.idempotency!.endpoint),
      claims.map((t) => t.idempotency!.key),
      claims.map((t) => t.idempotency!.requestHash),
      claims.map((t) => JSON.stringify(t.idempotency!.response)),
    ],
  );
  return new Set(rows.map((r) => r.k));
}

async function storedResponses(
  manager: EntityManager,
  items: NewTransaction[],
): Promise<Map<string, StoredResponse>> {
  const rows: (StoredResponse & { k: string })[] = await manager.query(
    `SELECT i."tenant_id" || '|' || i."environment" || '|' || i."endpoint" || '|' || i."key" AS "k",
       i."request_hash" AS "requestHash", i."status_code" AS "statusCode", i."response"
     FROM "idempotency_keys" i
     JOIN unnest($1::uuid[], $2::text[], $3::text[], $4::text[]) AS u(t, e, ep, k)
       ON i."tenant_id" = u.t AND i."environment" = u.e AND i."endpoint" = u.ep AND i."key" = u.k`,
    [
      items.map((t) => t.caller.tenantId),
      items.map((t) => t.caller.environment),
      items.map((t) => t.idempotency!.endpoint),
      items.map((t) => t.idempotency!.key),
    ],
  );
  return new Map(rows.map(({ k, ...stored }) => [k, stored]));
}

/**
 * Applies the item's deltas to the in-memory balances when every bucket stays non-negative, and
 * returns undefined; otherwise leaves them untouched and returns the first wallet that falls short.
 */
function applyIfFunded(balances: Map<string, Buckets>, deltas: BalanceDelta[]): string | undefined {
  const next = new Map<string, Buckets>();
  for (const d of deltas) {
    const current = next.get(d.walletId) ?? balances.get(d.walletId)!;
    const moved: Buckets = {
      total: current.total + (d.total ?? 0n),
      available: current.available + (d.available ?? 0n),
      pending: current.pending + (d.pending ?? 0n),
      locked: current.locked + (d.locked ?? 0n),
    };
    if (BUCKETS.some((b) => moved[b] < 0n)) return d.walletId;
    next.set(d.walletId, moved);
  }
  for (const [walletId, moved] of next) balances.set(walletId, moved);
  return undefined;
}

/**
 * One statement: drop the reservations of refused items, apply the summed deltas per wallet, insert
 * the transactions, ledger entries and outbox events of the accepted ones.
 */
async function writeAccepted(
  manager: EntityManager,
  accepted: NewTransaction[],
  released: NewTransaction[],
): Promise<void> {
  const sums = new Map<string, Buckets>();
  for (const d of accepted.flatMap((t) => t.deltas)) {
    const sum = sums.get(d.walletId) ?? { total: 0n, available: 0n, pending: 0n, locked: 0n };
    for (const b of BUCKETS) sum[b] += d[b] ?? 0n;
    sums.set(d.walletId, sum);
  }
  const wallets = [...sums.keys()].sort();
  const records = accepted.map((t) => t.record);
  const entries = accepted.flatMap((t) => t.deltas);
  const events = accepted.flatMap((t) => t.events);
  const now = new Date();
  const column = <T>(rows: T[], pick: (row: T) => unknown) => rows.map(pick);
  const params: unknown[] = [];
  const p = (values: unknown[], type: string) => {
    params.push(values);
    return `$${params.length}::${type}[]`;
  };
  const text = (values: unknown[]) => p(values, 'text');
  const uuid = (values: unknown[]) => p(values, 'uuid');
  const num = (values: unknown[]) => p(values, 'numeric');
  const when = (values: unknown[]) => p(values, 'timestamptz');
  const [written]: { moved: number; inserted: number }[] = await manager.query(
    `WITH released AS (
       DELETE FROM "idempotency_keys" WHERE ("tenant_id", "environment", "endpoint", "key") IN (
         SELECT * FROM unnest(${uuid(column(released, (t) => t.caller.tenantId))},
           ${text(column(released, (t) => t.caller.environment))}, ${text(column(released, (t) => t.idempotency!.endpoint))},
           ${text(column(released, (t) => t.idempotency!.key))}))
       RETURNING 1
     ),
     moved AS (
       UPDATE "balances" b SET "total" = b."total" + d.t, "available" = b."available" + d.a,
         "pending" = b."pending" + d.p, "locked" = b."locked" + d.l, "updated_at" = now()
       FROM unnest(${uuid(wallets)}, ${num(column(wallets, (w) => String(sums.get(w)!.total)))},
         ${num(column(wallets, (w) => String(sums.get(w)!.available)))},
         ${num(column(wallets, (w) => String(sums.get(w)!.pending)))},
         ${num(column(wallets, (w) => String(sums.get(w)!.locked)))}) AS d(w, t, a, p, l)
       WHERE b."wallet_id" = d.w
       RETURNING 1
     ),
     tx AS (
       INSERT INTO "transactions" ("id", "tenant_id", "environment", "type", "status", "vault_id", "asset_id",
         "wallet_id", "source_wallet_id", "destination_wallet_id", "amount", "source_address",
         "destination_address", "destination_tag", "tx_hash", "network_fee", "fee_currency", "note",
         "created_at", "updated_at")
       SELECT u.*, u.c FROM unnest(${uuid(column(records, (r) => r.id))}, ${uuid(column(records, (r) => r.tenantId))},
         ${text(column(records, (r) => r.environment))}, ${text(column(records, (r) => r.type))},
         ${text(column(records, (r) => r.status))}, ${uuid(column(records, (r) => r.vaultId))},
         ${uuid(column(records, (r) => r.assetId))}, ${uuid(column(records, (r) => r.walletId))},
         ${uuid(column(records, (r) => r.sourceWalletId))}, ${uuid(column(records, (r) => r.destinationWalletId))},
         ${num(column(records, (r) => r.amount))}, ${text(column(records, (r) => r.sourceAddress))},
         ${text(column(records, (r) => r.destinationAddress))}, ${text(column(records, (r) => r.destinationTag))},
         ${text(column(records, (r) => r.txHash))}, ${num(column(records, (r) => r.networkFee))},
         ${text(column(records, (r) => r.feeCurrency))}, ${text(column(records, (r) => r.note))},
         ${when(column(records, (r) => r.createdAt.toISOString()))}) AS u(id, te, en, ty, st, va, ass, wa, sw, dw, am,
           sa, da, dt, th, nf, fc, no, c)
       RETURNING 1
     ),
     ledger AS (
       INSERT INTO "ledger_entries" ("wallet_id", "transaction_id", "kind", "total_delta", "available_delta",
         "pending_delta", "locked_delta")
       SELECT * FROM unnest(${uuid(column(entries, (d) => d.walletId))}, ${uuid(column(entries, (d) => d.transactionId))},
         ${text(column(entries, (d) => d.kind))}, ${num(column(entries, (d) => String(d.total ?? 0n)))},
         ${num(column(entries, (d) => String(d.available ?? 0n)))}, ${num(column(entries, (d) => String(d.pending ?? 0n)))},
         ${num(column(entries, (d) => String(d.locked ?? 0n)))})
       RETURNING 1
     ),
     events AS (
       INSERT INTO "outbox" ("id", "tenant_id", "event_type", "entity_type", "entity_id", "data", "occurred_at")
       SELECT * FROM unnest(${uuid(column(events, () => randomUUID()))}, ${text(column(events, (e) => e.tenantId))},
         ${text(column(events, (e) => e.eventType))}, ${text(column(events, (e) => e.entityType))},
         ${text(column(events, (e) => e.entityId))}, ${p(
           column(events, (e) => JSON.stringify(e.data)),
           'jsonb',
         )},
         ${when(column(events, (e) => (e.occurredAt ?? now).toISOString()))})
       RETURNING 1
     )
     SELECT (SELECT count(*) FROM released)::int AS "released", (SELECT count(*) FROM moved)::int AS "moved",
       (SELECT count(*) FROM tx)::int AS "inserted", (SELECT count(*) FROM ledger)::int AS "entries",
       (SELECT count(*) FROM events)::int AS "events"`,
    params,
  );
  if (written!.moved !== wallets.length || written!.inserted !== records.length) {
    throw new Error('A batch wrote fewer rows than it planned');
  }
}
