import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { CustodyTransactionStatus } from '@tessera/contracts';
import { appendToOutbox, type OutboxEvent } from '@tessera/platform';
import type { DataSource, EntityManager } from 'typeorm';
import type { Caller } from '../../common/caller';
import { afterCursor, type PageCursor } from '../../common/cursor';
import { applyBalanceDeltas, type BalanceDelta, type LedgerKind, rowsOf } from '../ledger/ledger';
import type { TransactionRecord } from './transaction.record';

/** One move of the machine: the next status, the row patch, its ledger effect and its events. */
export interface TransitionMove {
  next: CustodyTransactionStatus;
  patch: {
    txHash?: string | null;
    failureReason?: string | null;
    terminal: boolean;
    /** Base units of feeCurrency. */
    networkFee?: string | null;
    feeCurrency?: string | null;
  };
  deltas: BalanceDelta[];
  events: (updated: TransactionRecord) => OutboxEvent[];
}

/** A move of one transaction out of `expected`, as the step batches queue it. */
export interface QueuedMove {
  id: string;
  expected: CustodyTransactionStatus;
  move: TransitionMove;
}

/** A deposit found on-chain (amount in base units). */
export interface NewDeposit {
  id: string;
  tenantId: string;
  vaultId: string;
  assetId: string;
  walletId: string;
  amount: bigint;
  sourceAddress: string;
  destinationAddress: string;
  txHash: string;
}

export interface TransactionFilters {
  take: number;
  after?: PageCursor;
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
         t."created_at" AS "createdAt", t."updated_at" AS "updatedAt", t."completed_at" AS "completedAt",
         t."event_sequence"::int AS "eventSequence", e."confirmations", e."block_number" AS "blockNumber", e."block_hash" AS "blockHash"
  FROM "transactions" t
  JOIN "vaults" v ON v."id" = t."vault_id"
  JOIN "assets" a ON a."id" = t."asset_id"
  LEFT JOIN "evm_transfers" e ON e."transaction_id" = t."id"`;

@Injectable()
export class TransactionsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

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

  /** For the worker role: the transactions of these ids that exist, any tenant, in no particular order. */
  async loadMany(ids: string[]): Promise<TransactionRecord[]> {
    return (await this.db.query(`${RECORD_SELECT} WHERE t."id" = ANY($1::uuid[])`, [
      ids,
    ])) as TransactionRecord[];
  }

  /** A transaction by id inside the caller's database transaction, its row locked (FOR UPDATE). */
  async loadIn(manager: EntityManager, id: string): Promise<TransactionRecord | undefined> {
    const rows: TransactionRecord[] = await manager.query(
      `${RECORD_SELECT} WHERE t."id" = $1 FOR UPDATE OF t`,
      [id],
    );
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
    // Every transaction that moves one of the vault's balances: its own (a transfer's is its source vault's),
    // and internal transfers into it, as the walletId filter lists a wallet's transfers both ways.
    if (f.vaultId)
      add(
        (n) =>
          `(t."vault_id" = ${n} OR t."destination_wallet_id" IN (SELECT w."id" FROM "wallets" w WHERE w."vault_id" = ${n}))`,
        f.vaultId,
      );
    if (f.walletId) {
      add(
        (n) => `(t."wallet_id" = ${n} OR t."source_wallet_id" = ${n} OR t."destination_wallet_id" = ${n})`,
        f.walletId,
      );
    }
    if (f.since) add((n) => `t."created_at" >= ${n}::timestamptz`, f.since);
    if (f.after) {
      params.push(f.after.createdAt, f.after.id);
      where.push(
        afterCursor('t', 'transactions', {
          time: `$${params.length - 1}`,
          id: `$${params.length}`,
          tenant: '$1',
        }),
      );
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
    decide: (locked: TransactionRecord, manager: EntityManager) => Promise<TransitionMove>,
  ): Promise<TransactionRecord | undefined> {
    return this.db.transaction(async (manager) => {
      const [locked] = (await manager.query(
        `${RECORD_SELECT} WHERE t."id" = $1 AND t."status" = $2 FOR UPDATE OF t`,
        [id, expected],
      )) as TransactionRecord[];
      if (!locked) return undefined;
      return this.applyTransition(manager, id, expected, await decide(locked, manager));
    });
  }

  /**
   * Deposits found on-chain, inside the caller's database transaction and in a fixed number of statements
   * whatever their count: the Submitted rows, their pending credits (balance rows locked in wallet-id order,
   * like every other writer), the ledger entries, and transaction.created plus balance.updated in the outbox.
   */
  async insertDeposits(
    manager: EntityManager,
    deposits: NewDeposit[],
    events: (record: TransactionRecord) => OutboxEvent[],
  ): Promise<TransactionRecord[]> {
    if (deposits.length === 0) return [];
    const rows = JSON.stringify(deposits.map((d) => ({ ...d, amount: String(d.amount) })));
    await manager.query(
      `INSERT INTO "transactions" ("id", "tenant_id", "environment", "type", "status", "vault_id", "asset_id",
         "wallet_id", "amount", "source_address", "destination_address", "tx_hash", "created_at", "updated_at")
       SELECT d."id", d."tenantId", 'production', 'Deposit', 'Submitted', d."vaultId", d."assetId", d."walletId",
              d."amount"::numeric, d."sourceAddress", d."destinationAddress", d."txHash", now(), now()
       FROM jsonb_to_recordset($1::jsonb) AS d("id" uuid, "tenantId" uuid, "vaultId" uuid, "assetId" uuid,
         "walletId" uuid, "amount" text, "sourceAddress" text, "destinationAddress" text, "txHash" text)`,
      [rows],
    );
    const wallets = [...new Set(deposits.map((d) => d.walletId))].sort();
    await manager.query(
      `SELECT 1 FROM "balances" WHERE "wallet_id" = ANY($1::uuid[]) ORDER BY "wallet_id" FOR UPDATE`,
      [wallets],
    );
    await manager.query(
      `UPDATE "balances" b SET "pending" = b."pending" + s."amount", "updated_at" = now()
       FROM (SELECT d."walletId", sum(d."amount"::numeric) AS "amount"
             FROM jsonb_to_recordset($1::jsonb) AS d("walletId" uuid, "amount" text) GROUP BY d."walletId") s
       WHERE b."wallet_id" = s."walletId"`,
      [rows],
    );
    await manager.query(
      `INSERT INTO "ledger_entries" ("id", "wallet_id", "transaction_id", "kind", "total_delta", "available_delta",
         "pending_delta", "locked_delta")
       SELECT uuidv7(), d."walletId", d."id", $2, 0, 0, d."amount"::numeric, 0
       FROM jsonb_to_recordset($1::jsonb) AS d("id" uuid, "walletId" uuid, "amount" text)`,
      [rows, 'deposit-pending' satisfies LedgerKind],
    );
    const records = (await manager.query(`${RECORD_SELECT} WHERE t."id" = ANY($1::uuid[])`, [
      deposits.map((d) => d.id),
    ])) as TransactionRecord[];
    await appendToOutbox(manager, records.flatMap(events));
    return records;
  }

  /**
   * Moves inside the caller's database transaction, in a fixed number of statements whatever their count
   * (decision 0423): one compare-and-set UPDATE (each row moves only if it is still in its move's `expected`
   * status), the ledger effects of the moves that moved (balance rows in wallet-id order), one read of the
   * moved records, one outbox insert of their events in the moves' order. Answers each move's updated record,
   * or undefined where the row had left `expected`. The ids must be distinct. One move whose ledger effect
   * cannot apply (InsufficientFundsError) fails them all: StepBatches sends such moves alone.
   */
  async applyTransitions(
    manager: EntityManager,
    moves: QueuedMove[],
  ): Promise<(TransactionRecord | undefined)[]> {
    const rows = moves.map(({ id, expected, move: { next, patch } }) => ({
      id,
      expected,
      next,
      txHash: patch.txHash ?? null,
      failureReason: patch.failureReason ?? null,
      terminal: patch.terminal,
      networkFee: patch.networkFee ?? null,
      feeCurrency: patch.feeCurrency ?? null,
    }));
    const moved = rowsOf<{ id: string }>(
      await manager.query(
        `UPDATE "transactions" t SET "status" = u."next", "updated_at" = now(),
           "event_sequence" = t."event_sequence" + 1,
           "tx_hash" = COALESCE(u."txHash", t."tx_hash"),
           "failure_reason" = COALESCE(u."failureReason", t."failure_reason"),
           "completed_at" = CASE WHEN u."terminal" THEN now() ELSE t."completed_at" END,
           "network_fee" = COALESCE(u."networkFee"::numeric, t."network_fee"),
           "fee_currency" = COALESCE(u."feeCurrency", t."fee_currency")
         FROM jsonb_to_recordset($1::jsonb) AS u("id" uuid, "expected" text, "next" text, "txHash" text,
           "failureReason" text, "terminal" boolean, "networkFee" text, "feeCurrency" text)
         WHERE t."id" = u."id" AND t."status" = u."expected"
         RETURNING t."id"`,
        [JSON.stringify(rows)],
      ),
    );
    if (moved.length === 0) return moves.map(() => undefined);
    const movedIds = new Set(moved.map((m) => m.id));
    await applyBalanceDeltas(
      manager,
      moves.flatMap((m) => (movedIds.has(m.id) ? m.move.deltas : [])),
    );
    const records = (await manager.query(`${RECORD_SELECT} WHERE t."id" = ANY($1::uuid[])`, [
      moved.map((m) => m.id),
    ])) as TransactionRecord[];
    const byId = new Map(records.map((r) => [r.id, r]));
    const updated = moves.map((m) => byId.get(m.id));
    await appendToOutbox(
      manager,
      moves.flatMap((m, i) => (updated[i] ? m.move.events(updated[i]) : [])),
    );
    return updated;
  }

  /** One move inside the caller's database transaction (the watcher's, a cancel's, an approval's). */
  async applyTransition(
    manager: EntityManager,
    id: string,
    expected: CustodyTransactionStatus,
    move: TransitionMove,
  ): Promise<TransactionRecord | undefined> {
    const [updated] = await this.applyTransitions(manager, [{ id, expected, move }]);
    return updated;
  }
}
