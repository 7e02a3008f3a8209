import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import {
  Batcher,
  isDataError,
  type OutboxEvent,
  preparedQuery,
  sqlState,
  wakeOutboxRelay,
} from '@tessera/platform';
import type { DataSource, EntityManager } from 'typeorm';
import type { Caller } from '../../common/caller';
import { batchEvents } from './batch-events';
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

/** A withdrawal policy refusal: the rule that refused and why (nothing is created). */
export interface PolicyRefusal {
  rule: string;
  message: string;
}

/** A policy's verdict on one transaction of a batch; see PolicyGate. */
export type PolicyVerdict =
  | ({ ok: false } & PolicyRefusal)
  /** The destination is not in the address book (decision 0220): refused before any policy rule is read. */
  | { ok: false; notInAddressBook: true }
  | {
      ok: true;
      /** What the transaction adds to the velocity windows it counts in, once accepted. */
      usage: [key: string, units: bigint][];
      /**
       * Writes the decisions (and the approval request) in the batch's database transaction, after the
       * transaction row; answers the fields it adds to the create response (and to the stored
       * Idempotency-Key response).
       */
      persist: (manager: EntityManager) => Promise<Record<string, unknown>>;
    };

/**
 * A withdrawal policy evaluated INSIDE the batch's database transaction, after the balance rows are locked
 * (so every other writer to the same wallet waits), in batch order. `usage` holds what earlier accepted items of
 * the same batch add to each velocity window (they are not inserted yet).
 */
export interface PolicyGate {
  evaluate(manager: EntityManager, usage: ReadonlyMap<string, bigint>): Promise<PolicyVerdict>;
}

/** One transaction to create with its ledger effect, events and (optionally) its Idempotency-Key. */
export interface NewTransaction {
  caller: Caller;
  record: TransactionRecord;
  deltas: BalanceDelta[];
  events: OutboxEvent[];
  idempotency?: IdempotencyClaim & { response: Record<string, unknown> };
  policy?: PolicyGate;
}

export type CreateOutcome =
  | { created: true; extras?: Record<string, unknown> }
  | { created: false; existing: StoredResponse }
  | { created: false; insufficientFunds: string }
  | { created: false; policyRefusal: PolicyRefusal }
  | { created: false; notInAddressBook: true };

interface Buckets {
  total: bigint;
  available: bigint;
  pending: bigint;
  locked: bigint;
}

const BUCKETS = ['total', 'available', 'pending', 'locked'] as const;
const MAX_BATCH = 256;
const RETRYABLE = new Set(['40P01', '40001']); // deadlock, serialization failure
/** Raised by `require_whole_batch`: the one-statement write does not apply to the batch as a whole. */
const NOT_WHOLE = 'CB001';

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
    // One batch in flight (decision 0420): batches on the same hot wallets commit one after the other anyway,
    // and a second one in flight only waited on the first's row locks and re-checked them after its commit;
    // the requests that arrive meanwhile make the next batch larger instead.
    maxConcurrentBatches: 1,
    conflictKey: claimKey,
    // One request's bad data fails the whole statement: rerun each alone so it fails only itself.
    retryAlone: (err) => isDataError(err) || err instanceof MissingBalanceRowError,
  });

  constructor(@InjectDataSource() private readonly db: DataSource) {}

  create(item: NewTransaction): Promise<CreateOutcome> {
    return this.commits.submit(item);
  }

  /** The response stored under the caller's Idempotency-Key for `endpoint`, while it is within its 24 h. */
  async stored(caller: Caller, claim: IdempotencyClaim): Promise<StoredResponse | null> {
    const rows: StoredResponse[] = await this.db.query(
      `SELECT "request_hash" AS "requestHash", "status_code" AS "statusCode", "response" FROM "idempotency_keys"
        WHERE "tenant_id" = $1 AND "environment" = $2 AND "endpoint" = $3 AND "key" = $4
          AND "created_at" > now() - ${IDEMPOTENCY_TTL}`,
      [caller.tenantId, caller.environment, claim.endpoint, claim.key],
    );
    return rows[0] ?? null;
  }

  private async writeBatch(items: NewTransaction[]): Promise<CreateOutcome[]> {
    // Most batches are fresh keys on funded wallets: ONE statement writes them whole, or raises and writes
    // nothing, and the batch then takes the step-by-step transaction below (docs/decisions/0205).
    let whole = items.every((t) => !t.policy);
    for (let attempt = 1; ; attempt++) {
      try {
        if (whole && (await this.writeWhole(items))) {
          wakeOutboxRelay(this.db); // committed: the worker's relay takes the events (decision 0403)
          return items.map(() => ({ created: true }));
        }
        whole = false;
        const outcomes = await this.db.transaction((manager) => this.writeInTransaction(manager, items));
        if (outcomes.some((o) => o.created)) wakeOutboxRelay(this.db);
        return outcomes;
      } catch (err) {
        const state = sqlState(err);
        if (whole && (state === NOT_WHOLE || isDataError(err))) {
          whole = false; // the step-by-step path decides (and reports any bad item) as before
          attempt--;
          continue;
        }
        if (RETRYABLE.has(state) && attempt < 3) continue;
        throw err;
      }
    }
  }

  /**
   * The whole batch in one autocommitted statement (one round trip, balance rows locked only while
   * Postgres runs it and commits): reserve every key, lock the batch's balance rows in wallet-id order,
   * apply the summed deltas where no bucket of a wallet would ever go below zero in arrival order, insert
   * transactions, ledger entries and events. `require_whole_batch` raises unless every key was reserved and
   * every wallet moved, which rolls it all back. Answers false when there is nothing to do this way.
   */
  private async writeWhole(items: NewTransaction[]): Promise<boolean> {
    if (items.some((t) => !t.idempotency)) return false;
    await preparedQuery(this.db)('custody-write-whole-batch', WRITE_WHOLE, wholeBatchPlan(items));
    return true;
  }

  private async writeInTransaction(
    manager: EntityManager,
    items: NewTransaction[],
  ): Promise<CreateOutcome[]> {
    const { claimed, balances } = await reserveAndLock(manager, items);
    const outcomes: (CreateOutcome | undefined)[] = [];
    const accepted: NewTransaction[] = [];
    const released: NewTransaction[] = [];
    const unclaimed: number[] = [];
    const usage = new Map<string, bigint>();
    const persists: {
      index: number;
      persist: (manager: EntityManager) => Promise<Record<string, unknown>>;
    }[] = [];
    for (const [i, item] of items.entries()) {
      const key = claimKey(item);
      if (key !== undefined && !claimed.has(key)) {
        unclaimed.push(i);
        outcomes.push(undefined); // answered from the stored response below
        continue;
      }
      // The policy first (a refused rule is the answer even when funds are short too), then the funds.
      const verdict = item.policy ? await item.policy.evaluate(manager, usage) : undefined;
      if (verdict && !verdict.ok) {
        if (key !== undefined) released.push(item);
        outcomes.push(
          'notInAddressBook' in verdict
            ? { created: false, notInAddressBook: true }
            : { created: false, policyRefusal: { rule: verdict.rule, message: verdict.message } },
        );
        continue;
      }
      const short = applyIfFunded(balances, item.deltas);
      if (short) {
        if (key !== undefined) released.push(item);
        outcomes.push({ created: false, insufficientFunds: short });
        continue;
      }
      accepted.push(item);
      if (verdict) {
        for (const [k, units] of verdict.usage) usage.set(k, (usage.get(k) ?? 0n) + units);
        persists.push({ index: i, persist: verdict.persist });
      }
      outcomes.push({ created: true });
    }
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
    const patches: { item: NewTransaction; extras: Record<string, unknown> }[] = [];
    for (const { index, persist } of persists) {
      const extras = await persist(manager);
      outcomes[index] = { created: true, extras };
      if (items[index]!.idempotency && Object.keys(extras).length > 0)
        patches.push({ item: items[index]!, extras });
    }
    if (patches.length > 0) await patchStoredResponses(manager, patches);
    return outcomes as CreateOutcome[];
  }
}

/** The JSON of a key reservation: what `jsonb_to_recordset` reads back as one row. */
const keyJson = (t: NewTransaction) => ({
  t: t.caller.tenantId,
  e: t.caller.environment,
  ep: t.idempotency!.endpoint,
  k: t.idempotency!.key,
});

/**
 * A key reservation with its request hash and stored response. Built whole rather than as
 * `{ ...keyJson(t), h, r }`: on Node 20 each property added after a spread costs about a microsecond
 * (decision 0422).
 */
const claimJson = (t: NewTransaction) => ({
  t: t.caller.tenantId,
  e: t.caller.environment,
  ep: t.idempotency!.endpoint,
  k: t.idempotency!.key,
  h: t.idempotency!.requestHash,
  r: t.idempotency!.response,
});

/**
 * Statement parts shared by the batch statements below; each takes its rows from `source`, a JSON
 * parameter expression (`jsonb_to_recordset`).
 */
const CLAIM_KEYS = `
    INSERT INTO "idempotency_keys" AS k ("tenant_id", "environment", "endpoint", "key", "request_hash",
      "status_code", "response")
    SELECT u.t, u.e, u.ep, u.k, u.h, 201, u.r
    FROM jsonb_to_recordset($1::jsonb) AS u(t uuid, e text, ep text, k text, h text, r jsonb)
    ON CONFLICT ("tenant_id", "environment", "endpoint", "key") DO UPDATE
      SET "request_hash" = EXCLUDED."request_hash", "response" = EXCLUDED."response", "status_code" = 201,
          "created_at" = now()
      WHERE k."created_at" <= now() - ${IDEMPOTENCY_TTL}`;

function insertTransactions(source: string): string {
  return `
    INSERT INTO "transactions" ("id", "tenant_id", "environment", "type", "status", "vault_id", "asset_id",
      "wallet_id", "source_wallet_id", "destination_wallet_id", "amount", "source_address",
      "destination_address", "destination_tag", "tx_hash", "network_fee", "fee_currency", "note",
      "created_at", "updated_at")
    SELECT r."id", r."tenantId", r."environment", r."type", r."status", r."vaultId", r."assetId", r."walletId",
      r."sourceWalletId", r."destinationWalletId", r."amount", r."sourceAddress", r."destinationAddress",
      r."destinationTag", r."txHash", r."networkFee", r."feeCurrency", r."note", r."createdAt", r."createdAt"
    FROM jsonb_to_recordset(${source}) AS r("id" uuid, "tenantId" uuid, "environment" text,
      "type" text, "status" text, "vaultId" uuid, "assetId" uuid, "walletId" uuid, "sourceWalletId" uuid,
      "destinationWalletId" uuid, "amount" numeric, "sourceAddress" text, "destinationAddress" text,
      "destinationTag" text, "txHash" text, "networkFee" numeric, "feeCurrency" text, "note" text,
      "createdAt" timestamptz)
    RETURNING 1`;
}

/**
 * The JSON rows of insertTransactions: the columns it inserts and nothing else (a record's vault and asset
 * context is for the API's answer; serialising it here cost CPU on both sides of the batch statement).
 */
function transactionRows(items: NewTransaction[]) {
  return items.map(({ record: r }) => ({
    id: r.id,
    tenantId: r.tenantId,
    environment: r.environment,
    type: r.type,
    status: r.status,
    vaultId: r.vaultId,
    assetId: r.assetId,
    walletId: r.walletId,
    sourceWalletId: r.sourceWalletId,
    destinationWalletId: r.destinationWalletId,
    amount: r.amount,
    sourceAddress: r.sourceAddress,
    destinationAddress: r.destinationAddress,
    destinationTag: r.destinationTag,
    txHash: r.txHash,
    networkFee: r.networkFee,
    feeCurrency: r.feeCurrency,
    note: r.note,
    createdAt: r.createdAt,
  }));
}

/** The JSON rows of insertLedgerEntries: every delta of every item, amounts as decimal strings. */
function ledgerRows(items: NewTransaction[]) {
  return items.flatMap((t) =>
    t.deltas.map((d) => ({
      w: d.walletId,
      x: d.transactionId,
      k: d.kind,
      t: String(d.total ?? 0n),
      a: String(d.available ?? 0n),
      p: String(d.pending ?? 0n),
      l: String(d.locked ?? 0n),
    })),
  );
}

function insertLedgerEntries(source: string): string {
  return `
    INSERT INTO "ledger_entries" ("id", "wallet_id", "transaction_id", "kind", "total_delta", "available_delta",
      "pending_delta", "locked_delta")
    SELECT uuidv7(), e.w, e.x, e.k, e.t, e.a, e.p, e.l
    FROM jsonb_to_recordset(${source}) AS e(w uuid, x uuid, k text, t numeric, a numeric, p numeric, l numeric)
    RETURNING 1`;
}

function insertOutboxEvents(source: string): string {
  return `
    INSERT INTO "outbox" ("id", "tenant_id", "event_type", "entity_type", "entity_id", "data", "occurred_at",
      "sequence")
    SELECT uuidv7(), v."tenantId", v."eventType", v."entityType", v."entityId", v."data", v."occurredAt",
      v."sequence"
    FROM jsonb_to_recordset(${source}) AS v("tenantId" text, "eventType" text, "entityType" text,
      "entityId" text, "data" jsonb, "occurredAt" timestamptz, "sequence" bigint)
    RETURNING 1`;
}

/**
 * ONE statement: reserve the Idempotency-Keys with the response already built, then lock the batch's
 * balance rows in wallet-id order and read them. Keys come first (the Append runs its branches in
 * order): a batch waiting for the hot rows already holds its reservations, so the second batch in
 * flight does that work while the first holds the rows. A key held by a committed request (within
 * 24 h) is not returned; one held by a request still in flight makes the statement wait for it.
 * Statements here take their rows as ONE JSON parameter (`jsonb_to_recordset`): one native
 * JSON.stringify instead of per-element array escaping.
 */
const RESERVE_AND_LOCK = `
  WITH claimed AS (
${CLAIM_KEYS}
    RETURNING k."tenant_id" || '|' || k."environment" || '|' || k."endpoint" || '|' || k."key" AS "k"
  ),
  locked AS (
    SELECT "wallet_id"::text AS "w", "total"::text, "available"::text, "pending"::text, "locked"::text
    FROM "balances" WHERE "wallet_id" = ANY($2::uuid[]) ORDER BY "wallet_id" FOR UPDATE
  )
  SELECT 'key' AS "row", c."k" AS "id", NULL AS "total", NULL AS "available", NULL AS "pending",
    NULL AS "locked" FROM claimed c
  UNION ALL
  SELECT 'balance', l."w", l."total", l."available", l."pending", l."locked" FROM locked l`;

async function reserveAndLock(
  manager: EntityManager,
  items: NewTransaction[],
): Promise<{ claimed: Set<string>; balances: Map<string, Buckets> }> {
  const claims = items.filter((t) => t.idempotency);
  const wallets = [...new Set(items.flatMap((t) => t.deltas.map((d) => d.walletId)))].sort();
  const rows: ({ row: 'key' | 'balance'; id: string } & Record<(typeof BUCKETS)[number], string>)[] =
    await manager.query(RESERVE_AND_LOCK, [JSON.stringify(claims.map(claimJson)), wallets]);
  const claimed = new Set<string>();
  const balances = new Map<string, Buckets>();
  for (const r of rows) {
    if (r.row === 'key') {
      claimed.add(r.id);
      continue;
    }
    balances.set(r.id, {
      total: BigInt(r.total),
      available: BigInt(r.available),
      pending: BigInt(r.pending),
      locked: BigInt(r.locked),
    });
  }
  if (balances.size !== wallets.length) throw new MissingBalanceRowError();
  return { claimed, balances };
}

/** Adds the policy's fields to the reserved responses, so a replay answers exactly what the first call did. */
async function patchStoredResponses(
  manager: EntityManager,
  patches: { item: NewTransaction; extras: Record<string, unknown> }[],
): Promise<void> {
  await manager.query(
    `UPDATE "idempotency_keys" i SET "response" = i."response" || u.x
     FROM jsonb_to_recordset($1::jsonb) AS u(t uuid, e text, ep text, k text, x jsonb)
     WHERE i."tenant_id" = u.t AND i."environment" = u.e AND i."endpoint" = u.ep AND i."key" = u.k`,
    [JSON.stringify(patches.map((p) => ({ ...keyJson(p.item), x: p.extras })))],
  );
}

async function storedResponses(
  manager: EntityManager,
  items: NewTransaction[],
): Promise<Map<string, StoredResponse>> {
  const rows: (StoredResponse & { k: string })[] = await manager.query(
    `SELECT i."tenant_id" || '|' || i."environment" || '|' || i."endpoint" || '|' || i."key" AS "k",
       i."request_hash" AS "requestHash", i."status_code" AS "statusCode", i."response"
     FROM "idempotency_keys" i
     JOIN jsonb_to_recordset($1::jsonb) AS u(t uuid, e text, ep text, k text)
       ON i."tenant_id" = u.t AND i."environment" = u.e AND i."endpoint" = u.ep AND i."key" = u.k`,
    [JSON.stringify(items.map(keyJson))],
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
 * The one-statement batch (see `writeWhole`). Each part of the batch is its own JSON parameter (parsed
 * once); `balances` carries each wallet's summed deltas and, per bucket, the lowest running sum in arrival
 * order, so `balance + lowest >= 0` is the arrival-order funds check of every item at once.
 */
const WRITE_WHOLE = `
  WITH claimed AS (
${CLAIM_KEYS}
    RETURNING 1
  ),
  locked AS (
    SELECT "wallet_id" FROM "balances" WHERE "wallet_id" = ANY($2::uuid[]) ORDER BY "wallet_id" FOR UPDATE
  ),
  moved AS (
    UPDATE "balances" b SET "total" = b."total" + d.t, "available" = b."available" + d.a,
      "pending" = b."pending" + d.p, "locked" = b."locked" + d.l, "updated_at" = now()
    FROM locked, jsonb_to_recordset($3::jsonb) AS d(w uuid, t numeric, a numeric, p numeric, l numeric,
      mt numeric, ma numeric, mp numeric, ml numeric)
    WHERE b."wallet_id" = locked."wallet_id" AND b."wallet_id" = d.w
      AND b."total" + d.mt >= 0 AND b."available" + d.ma >= 0 AND b."pending" + d.mp >= 0
      AND b."locked" + d.ml >= 0
    RETURNING 1
  ),
  tx AS (
${insertTransactions('$4::jsonb')}
  ),
  ledger AS (
${insertLedgerEntries('$5::jsonb')}
  ),
  events AS (
${insertOutboxEvents('$6::jsonb')}
  )
  SELECT "require_whole_batch"(
    (SELECT count(*) FROM claimed) = $7 AND (SELECT count(*) FROM moved) = $8
    AND (SELECT count(*) FROM tx) = $7 AND (SELECT count(*) FROM ledger) = $9
    AND (SELECT count(*) FROM events) = $10) AS "ok"`;

/** The parameters of WRITE_WHOLE for a batch whose items all carry an Idempotency-Key. */
function wholeBatchPlan(items: NewTransaction[]): unknown[] {
  const zero = (): Buckets => ({ total: 0n, available: 0n, pending: 0n, locked: 0n });
  const sums = new Map<string, { sum: Buckets; lowest: Buckets }>();
  // Running sums per wallet after each delta, in arrival order (as applyIfFunded checks them one by one).
  for (const d of items.flatMap((t) => t.deltas)) {
    const w = sums.get(d.walletId) ?? { sum: zero(), lowest: zero() };
    for (const b of BUCKETS) {
      w.sum[b] += d[b] ?? 0n;
      if (w.sum[b] < w.lowest[b]) w.lowest[b] = w.sum[b];
    }
    sums.set(d.walletId, w);
  }
  const wallets = [...sums.keys()].sort();
  const now = new Date();
  const entries = ledgerRows(items);
  const events = batchEvents(items, now);
  return [
    JSON.stringify(items.map(claimJson)),
    wallets,
    JSON.stringify(
      wallets.map((walletId) => {
        const { sum, lowest } = sums.get(walletId)!;
        return {
          w: walletId,
          t: String(sum.total),
          a: String(sum.available),
          p: String(sum.pending),
          l: String(sum.locked),
          mt: String(lowest.total),
          ma: String(lowest.available),
          mp: String(lowest.pending),
          ml: String(lowest.locked),
        };
      }),
    ),
    JSON.stringify(transactionRows(items)),
    JSON.stringify(entries),
    JSON.stringify(events),
    items.length,
    wallets.length,
    entries.length,
    events.length,
  ];
}

const WRITE_ACCEPTED = `
  WITH released AS (
    DELETE FROM "idempotency_keys" i USING jsonb_to_recordset($1::jsonb -> 'released') AS u(t uuid, e text, ep text, k text)
    WHERE i."tenant_id" = u.t AND i."environment" = u.e AND i."endpoint" = u.ep AND i."key" = u.k
    RETURNING 1
  ),
  moved AS (
    UPDATE "balances" b SET "total" = b."total" + d.t, "available" = b."available" + d.a,
      "pending" = b."pending" + d.p, "locked" = b."locked" + d.l, "updated_at" = now()
    FROM jsonb_to_recordset($1::jsonb -> 'balances') AS d(w uuid, t numeric, a numeric, p numeric, l numeric)
    WHERE b."wallet_id" = d.w
    RETURNING 1
  ),
  tx AS (
${insertTransactions("$1::jsonb -> 'transactions'")}
  ),
  ledger AS (
${insertLedgerEntries("$1::jsonb -> 'entries'")}
  ),
  events AS (
${insertOutboxEvents("$1::jsonb -> 'events'")}
  )
  SELECT (SELECT count(*) FROM released)::int AS "released", (SELECT count(*) FROM moved)::int AS "moved",
    (SELECT count(*) FROM tx)::int AS "inserted", (SELECT count(*) FROM ledger)::int AS "entries",
    (SELECT count(*) FROM events)::int AS "events"`;

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
  const units = (v: bigint | undefined) => String(v ?? 0n);
  const now = new Date();
  const document = {
    released: released.map(keyJson),
    balances: wallets.map((w) => {
      const sum = sums.get(w)!;
      return { w, t: units(sum.total), a: units(sum.available), p: units(sum.pending), l: units(sum.locked) };
    }),
    transactions: transactionRows(accepted),
    entries: ledgerRows(accepted),
    events: batchEvents(accepted, now),
  };
  const [written]: { moved: number; inserted: number }[] = await manager.query(WRITE_ACCEPTED, [
    JSON.stringify(document),
  ]);
  if (written!.moved !== wallets.length || written!.inserted !== accepted.length) {
    throw new Error('A batch wrote fewer rows than it planned');
  }
}
