import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type DataSourceOptions, type EntityManager } from 'typeorm';
import { rowsOf } from '../../ledger/ledger';

/** Connections of the side pool: short transactions; top-ups of one tenant serialise on the station's nonce anyway. */
const SIDE_POOL_SIZE = 2;

/** A withdrawal's signed transaction, committed before it is sent (decision 0440; a fee-bump replacement too, 0449). */
export interface SendIntent {
  transactionId: string;
  chainId: number;
  fromAddress: string;
  nonce: number;
  txHash: string;
  rawTx: `0x${string}`;
  gasLimit: string;
  maxFeePerGas: string;
  maxPriorityFeePerGas: string;
}

/** A gas station's signed top-up, committed before it is sent (decision 0451). */
export interface GasTopUpIntent {
  chainId: number;
  stationAddress: string;
  nonce: number;
  txHash: string;
  rawTx: `0x${string}`;
  toAddress: string;
  value: string;
}

/** Runs `work` in a database transaction of the gas station's session (EvmRepository.withGasStation). */
export type StationTransaction = <T>(work: (manager: EntityManager) => Promise<T>) => Promise<T>;

/** A deposit address the scanner watches, with the wallet it credits. */
export interface WatchedAddress {
  address: string;
  walletId: string;
  tenantId: string;
  vaultId: string;
  assetId: string;
  assetSymbol: string;
}

export interface SenderKey {
  address: string;
  derivationPath: string;
  tenantId: string;
  environment: string;
  seedSealed: string;
}

/** An open (not settled) EVM transfer with its transaction's status and asset threshold. */
export interface OpenTransfer {
  transactionId: string;
  direction: 'in' | 'out';
  status: string;
  type: string;
  txHash: string | null;
  sentHashes: string[];
  blockNumber: string | null;
  blockHash: string | null;
  confirmations: number;
  nonce: string | null;
  fromAddress: string;
  gasLimit: string | null;
  maxFeePerGas: string | null;
  maxPriorityFeePerGas: string | null;
  feeHeld: string | null;
  feeWalletId: string | null;
  broadcastAt: Date | null;
  /** A fee-bump replacement committed before it was sent and not recorded since (decision 0449), or null. */
  unrecordedReplacement: SendIntent | null;
  assetConfirmations: number;
  walletId: string;
  tenantId: string;
  environment: string;
  amount: string;
  destinationAddress: string;
  assetSymbol: string;
}

export interface NewOutbound {
  transactionId: string;
  chainId: number;
  txHash: string;
  fromAddress: string;
  toAddress: string;
  nonce: number;
  gasLimit: bigint;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  feeHeld: bigint | null;
  feeWalletId: string | null;
}

export interface NewDeposit {
  transactionId: string;
  chainId: number;
  txHash: string;
  logIndex: number;
  fromAddress: string;
  toAddress: string;
  blockNumber: bigint;
  blockHash: string;
}

/** The EVM chain's tables: scan cursor, recent block hashes, nonces and the on-chain side of transactions. */
@Injectable()
export class EvmRepository implements OnModuleDestroy {
  /** A small pool of its own (sideTransaction), opened on first use. */
  private side?: Promise<DataSource>;

  constructor(@InjectDataSource() readonly db: DataSource) {}

  /**
   * What this database holds of the EVM chain, read at boot (EvmBootCheck): live keys' wallets on an `ethereum`
   * asset, and whether a worker has ever worked a node here (a scan cursor or an EVM transfer).
   */
  async footprint(): Promise<{ liveWallets: number; chainRecords: boolean }> {
    const [row] = await this.db.query(
      `SELECT (SELECT count(*)::int FROM "wallets" w JOIN "assets" s ON s."id" = w."asset_id"
                WHERE w."environment" = 'production' AND s."network" = 'ethereum') AS "liveWallets",
              (EXISTS (SELECT 1 FROM "evm_cursors") OR EXISTS (SELECT 1 FROM "evm_transfers")) AS "chainRecords"`,
    );
    return { liveWallets: row.liveWallets as number, chainRecords: row.chainRecords as boolean };
  }

  async onModuleDestroy(): Promise<void> {
    const side = await this.side?.catch(() => undefined);
    if (side?.isInitialized) await side.destroy();
  }

  /**
   * Runs `work` in a transaction on a pool of its own (SIDE_POOL_SIZE connections), for writes that must commit
   * apart from the broadcast's transaction while it holds a connection of the main pool: gas top-ups (with
   * withGasStation) and send intents (decision 0440). A gas top-up runs while
   * its withdrawal's broadcast holds a connection of the main pool and the transaction's row lock; taking a
   * second connection from that same pool deadlocked the worker as soon as as many top-ups ran at once as the
   * pool had connections (every one holding one and waiting for another), freezing every step, deposit credit
   * and outbox relay of the process. This pool's transactions touch only the tenant's seed, the station's nonce
   * row and lock, evm_gas_top_up_intents and evm_send_intents, which no broadcast holds, so they always finish (decision 0439).
   */
  async sideTransaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return (await this.sidePool()).transaction(work);
  }

  private sidePool(): Promise<DataSource> {
    this.side ??= new DataSource({
      ...this.db.options,
      subscribers: [],
      extra: {
        ...(this.db.options.extra as Record<string, unknown>),
        max: SIDE_POOL_SIZE,
        application_name: 'custody-side',
      },
    } as DataSourceOptions).initialize();
    return this.side;
  }

  /**
   * Runs `work` holding the gas station's lock, a session advisory lock on one connection of the side pool, with
   * `transaction` running committed steps on that same connection (decision 0451): a top-up commits its intent
   * before the send and records the send after it, two transactions, and no other top-up of the station (in any
   * process) may take a nonce between them. One connection for the whole of it, so top-ups never wait for a
   * second one (decision 0439). `ifFree`: answers undefined at once when another session holds the lock.
   */
  async withGasStation<T>(
    chainId: number,
    station: string,
    work: (transaction: StationTransaction) => Promise<T>,
    options: { ifFree?: boolean } = {},
  ): Promise<T | undefined> {
    const key = `tessera:custody:gas-station:${chainId}:${station.toLowerCase()}`;
    const runner = (await this.sidePool()).createQueryRunner();
    await runner.connect();
    try {
      if (options.ifFree) {
        const [row] = await runner.query('SELECT pg_try_advisory_lock(hashtext($1)) AS "locked"', [key]);
        if (!row.locked) return undefined;
      } else {
        await runner.query('SELECT pg_advisory_lock(hashtext($1))', [key]);
      }
      try {
        return await work((step) => runner.manager.transaction(step));
      } finally {
        // A failed unlock means a broken connection, whose session (and lock) is gone with it.
        await runner.query('SELECT pg_advisory_unlock(hashtext($1))', [key]).catch(() => undefined);
      }
    } finally {
      await runner.release();
    }
  }

  // ---- withdrawals -------------------------------------------------------------------------------------

  /** The wallet's first deposit address (the sender of its withdrawals) and what derives its key. */
  async sender(manager: EntityManager, walletId: string): Promise<SenderKey | undefined> {
    const rows: SenderKey[] = await manager.query(
      `SELECT a."address", a."derivation_path" AS "derivationPath", w."tenant_id" AS "tenantId",
              w."environment", t."hd_seed_sealed" AS "seedSealed"
       FROM "wallet_addresses" a JOIN "wallets" w ON w."id" = a."wallet_id" JOIN "tenants" t ON t."id" = w."tenant_id"
       WHERE a."wallet_id" = $1 ORDER BY a."created_at" LIMIT 1`,
      [walletId],
    );
    return rows[0];
  }

  async tenantSeed(manager: EntityManager, tenantId: string): Promise<string | undefined> {
    const [row] = await manager.query(`SELECT "hd_seed_sealed" AS "seed" FROM "tenants" WHERE "id" = $1`, [
      tenantId,
    ]);
    return row?.seed ?? undefined;
  }

  /** The wallet's available balance, its row locked until the caller's transaction ends. */
  async lockAvailable(manager: EntityManager, walletId: string): Promise<bigint> {
    const [row] = await manager.query(
      `SELECT "available" FROM "balances" WHERE "wallet_id" = $1 FOR UPDATE`,
      [walletId],
    );
    return row ? BigInt(row.available) : 0n;
  }

  /**
   * The sender's next nonce, its row locked until the caller's transaction ends, so concurrent sends from one
   * address queue here and each gets its own. A first use starts from the node's pending count.
   */
  async lockNonce(
    manager: EntityManager,
    chainId: number,
    address: string,
    fromChain: () => Promise<number>,
  ): Promise<number> {
    const select = () =>
      manager.query(
        `SELECT "next_nonce" AS "next" FROM "evm_nonces" WHERE "chain_id" = $1 AND "address" = $2 FOR UPDATE`,
        [chainId, address.toLowerCase()],
      );
    let [row] = await select();
    if (!row) {
      await manager.query(
        `INSERT INTO "evm_nonces" ("chain_id", "address", "next_nonce") VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
        [chainId, address.toLowerCase(), await fromChain()],
      );
      [row] = await select();
    }
    return Number(row.next);
  }

  /**
   * The signed transaction committed for `transactionId` before it was sent and not recorded since (decision 0440: a
   * first send, with no evm_transfers row yet; decision 0449: a fee-bump replacement of a recorded send), inside the
   * caller's database transaction. The one reader of evm_send_intents by transaction (the broadcast's recovery, and
   * EvmChainAdapter.sendMayBeOnChain for the cancel and the broadcast step).
   */
  async sendIntent(manager: EntityManager, transactionId: string): Promise<SendIntent | undefined> {
    const [row] = await manager.query(
      `SELECT "chain_id" AS "chainId", "from_address" AS "fromAddress", "nonce"::int AS "nonce",
              "tx_hash" AS "txHash", "raw_tx" AS "rawTx", "gas_limit"::text AS "gasLimit",
              "max_fee_per_gas"::text AS "maxFeePerGas", "max_priority_fee_per_gas"::text AS "maxPriorityFeePerGas"
         FROM "evm_send_intents" WHERE "transaction_id" = $1`,
      [transactionId],
    );
    return row ? { ...row, transactionId } : undefined;
  }

  /**
   * Commits `intent` before its transaction is sent, on the side pool (sideTransaction): the broadcast's own
   * transaction may roll back after the node accepted it, and this row must survive that.
   */
  async recordSendIntent(intent: SendIntent): Promise<void> {
    await this.sideTransaction((manager) =>
      manager.query(
        `INSERT INTO "evm_send_intents" ("transaction_id", "chain_id", "from_address", "nonce", "tx_hash", "raw_tx",
           "gas_limit", "max_fee_per_gas", "max_priority_fee_per_gas")
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT ("transaction_id") DO UPDATE SET "chain_id" = EXCLUDED."chain_id",
           "from_address" = EXCLUDED."from_address", "nonce" = EXCLUDED."nonce", "tx_hash" = EXCLUDED."tx_hash",
           "raw_tx" = EXCLUDED."raw_tx", "gas_limit" = EXCLUDED."gas_limit",
           "max_fee_per_gas" = EXCLUDED."max_fee_per_gas",
           "max_priority_fee_per_gas" = EXCLUDED."max_priority_fee_per_gas", "created_at" = now()`,
        [
          intent.transactionId,
          intent.chainId,
          intent.fromAddress.toLowerCase(),
          intent.nonce,
          intent.txHash,
          intent.rawTx,
          intent.gasLimit,
          intent.maxFeePerGas,
          intent.maxPriorityFeePerGas,
        ],
      ),
    );
  }

  /**
   * Drops the intent: in the broadcast's transaction once the send is recorded (both commit or neither), or on
   * the side pool (no manager) when the node refused the transaction for good.
   */
  async dropSendIntent(transactionId: string, manager?: EntityManager): Promise<void> {
    const drop = (m: EntityManager) =>
      m.query('DELETE FROM "evm_send_intents" WHERE "transaction_id" = $1', [transactionId]);
    await (manager ? drop(manager) : this.sideTransaction(drop));
  }

  /**
   * Up to `limit` gas stations of the chain with top-ups committed before they were sent and not recorded since,
   * lowest address first; the watcher asks every round (decision 0454). A skip scan of the primary key, one index
   * probe per station: the table holds only unsettled intents (a settled one is deleted), but a plain DISTINCT was
   * planned as a scan of every heap page, dead rows of recorded top-ups included until vacuum removes them.
   */
  async gasStationsWithTopUpIntents(chainId: number, limit: number): Promise<string[]> {
    const rows: { station: string }[] = await this.db.query(
      `WITH RECURSIVE s AS (
         (SELECT "station_address" AS "station", 1 AS "n" FROM "evm_gas_top_up_intents" WHERE "chain_id" = $1
           ORDER BY "station_address" LIMIT 1)
         UNION ALL
         SELECT (SELECT i."station_address" FROM "evm_gas_top_up_intents" i
                  WHERE i."chain_id" = $1 AND i."station_address" > s."station"
                  ORDER BY i."station_address" LIMIT 1), s."n" + 1
           FROM s WHERE s."station" IS NOT NULL AND s."n" < $2)
       SELECT "station" FROM s WHERE "station" IS NOT NULL`,
      [chainId, limit],
    );
    return rows.map((r) => r.station);
  }

  /** The station's top-ups committed before they were sent and not recorded since, lowest nonce first. */
  async gasTopUpIntents(manager: EntityManager, chainId: number, station: string): Promise<GasTopUpIntent[]> {
    return manager.query(
      `SELECT "chain_id" AS "chainId", "station_address" AS "stationAddress", "nonce"::int AS "nonce",
              "tx_hash" AS "txHash", "raw_tx" AS "rawTx", "to_address" AS "toAddress", "value"::text AS "value"
         FROM "evm_gas_top_up_intents" WHERE "chain_id" = $1 AND "station_address" = $2 ORDER BY "nonce"`,
      [chainId, station.toLowerCase()],
    );
  }

  async recordGasTopUpIntent(manager: EntityManager, intent: GasTopUpIntent): Promise<void> {
    await manager.query(
      `INSERT INTO "evm_gas_top_up_intents" ("chain_id", "station_address", "nonce", "tx_hash", "raw_tx",
         "to_address", "value")
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [
        intent.chainId,
        intent.stationAddress.toLowerCase(),
        intent.nonce,
        intent.txHash,
        intent.rawTx,
        intent.toAddress.toLowerCase(),
        intent.value,
      ],
    );
  }

  /** A top-up the node took: the station's next nonce moved past it (never back) and its intent deleted, together. */
  async recordGasTopUp(manager: EntityManager, intent: GasTopUpIntent): Promise<void> {
    await manager.query(
      `INSERT INTO "evm_nonces" ("chain_id", "address", "next_nonce") VALUES ($1, $2, $3)
       ON CONFLICT ("chain_id", "address")
       DO UPDATE SET "next_nonce" = GREATEST("evm_nonces"."next_nonce", EXCLUDED."next_nonce")`,
      [intent.chainId, intent.stationAddress.toLowerCase(), intent.nonce + 1],
    );
    await this.dropGasTopUpIntent(manager, intent);
  }

  /** A top-up that never left (the node refused it, or has not got it and will not take it). */
  async dropGasTopUpIntent(manager: EntityManager, intent: GasTopUpIntent): Promise<void> {
    await manager.query(
      `DELETE FROM "evm_gas_top_up_intents" WHERE "chain_id" = $1 AND "station_address" = $2 AND "nonce" = $3`,
      [intent.chainId, intent.stationAddress.toLowerCase(), intent.nonce],
    );
  }

  async setNextNonce(manager: EntityManager, chainId: number, address: string, next: number): Promise<void> {
    await manager.query(
      `UPDATE "evm_nonces" SET "next_nonce" = $3 WHERE "chain_id" = $1 AND "address" = $2`,
      [chainId, address.toLowerCase(), next],
    );
  }

  async insertOutbound(manager: EntityManager, o: NewOutbound): Promise<void> {
    await manager.query(
      `INSERT INTO "evm_transfers" ("transaction_id", "chain_id", "direction", "tx_hash", "from_address",
         "to_address", "nonce", "gas_limit", "max_fee_per_gas", "max_priority_fee_per_gas", "fee_held",
         "fee_wallet_id", "sent_hashes", "broadcast_at")
       VALUES ($1, $2, 'out', $3, $4, $5, $6, $7, $8, $9, $10, $11, ARRAY[$3], now())`,
      [
        o.transactionId,
        o.chainId,
        o.txHash,
        o.fromAddress,
        o.toAddress,
        o.nonce,
        String(o.gasLimit),
        String(o.maxFeePerGas),
        String(o.maxPriorityFeePerGas),
        o.feeHeld === null ? null : String(o.feeHeld),
        o.feeWalletId,
      ],
    );
  }

  /**
   * A fee bump's replacement recorded (decision 0449): `hold` runs first in the transaction (the extra fee held, and
   * for a new bump the send itself) and answers the fee now held for the send (null: unchanged); then one UPDATE
   * writes the replacement's hash (appended once), fee caps and that hold, the transaction's txHash follows, and the
   * replacement's send intent is dropped: all commit or none.
   */
  async recordReplacement(
    replacement: SendIntent,
    hold: (manager: EntityManager) => Promise<bigint | null>,
  ): Promise<void> {
    const { transactionId, txHash } = replacement;
    await this.db.transaction(async (manager) => {
      const feeHeld = await hold(manager);
      await manager.query(
        `UPDATE "evm_transfers" SET "tx_hash" = $2,
           "sent_hashes" = CASE WHEN $2 = ANY("sent_hashes") THEN "sent_hashes" ELSE array_append("sent_hashes", $2) END,
           "max_fee_per_gas" = $3, "max_priority_fee_per_gas" = $4, "fee_held" = COALESCE($5, "fee_held"),
           "broadcast_at" = now(), "updated_at" = now()
         WHERE "transaction_id" = $1`,
        [
          transactionId,
          txHash,
          replacement.maxFeePerGas,
          replacement.maxPriorityFeePerGas,
          feeHeld === null ? null : String(feeHeld),
        ],
      );
      await manager.query(`UPDATE "transactions" SET "tx_hash" = $2, "updated_at" = now() WHERE "id" = $1`, [
        transactionId,
        txHash,
      ]);
      await this.dropSendIntent(transactionId, manager);
    });
  }

  /** Runs `work` holding the sender's nonce row (a gas top-up commits on its own, apart from the withdrawal). */
  inTransaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /**
   * Runs `work` if this replica gets the chain watcher's advisory lock (held by an open transaction, so it
   * goes with the session); another replica's round in progress makes this one skip.
   */
  async withLeadership(work: () => Promise<void>): Promise<boolean> {
    const runner = this.db.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction();
      const [row] = await runner.query(
        `SELECT pg_try_advisory_xact_lock(hashtext('tessera:custody:evm-watcher')) AS "locked"`,
      );
      if (!row.locked) return false;
      await work();
      return true;
    } finally {
      await runner.rollbackTransaction().catch(() => undefined);
      await runner.release();
    }
  }

  // ---- chain identity (decision 0467) ------------------------------------------------------------------

  async recordedGenesis(chainId: number, manager?: EntityManager): Promise<string | undefined> {
    const [row] = await (manager ?? this.db).query(
      `SELECT "genesis_hash" AS "genesis" FROM "evm_chains" WHERE "chain_id" = $1`,
      [chainId],
    );
    return row?.genesis;
  }

  /** Records `genesis` as the chain's when none is recorded; answers the recorded one either way. */
  async recordGenesis(chainId: number, genesis: string): Promise<string> {
    const [row] = await this.db.query(
      `WITH ins AS (
         INSERT INTO "evm_chains" ("chain_id", "genesis_hash") VALUES ($1, $2)
         ON CONFLICT ("chain_id") DO NOTHING RETURNING "genesis_hash")
       SELECT "genesis_hash" AS "genesis" FROM ins
       UNION ALL SELECT "genesis_hash" FROM "evm_chains" WHERE "chain_id" = $1
       LIMIT 1`,
      [chainId, genesis],
    );
    return row.genesis as string;
  }

  /**
   * Forgets a chain that is gone, in one transaction, once its open transfers are settled: its credited deposits
   * leave the deposit key (the new chain may carry the same hashes), and its scanned blocks, cursor, nonces and
   * unrecorded sends go. `genesis` becomes the chain's. Answers the credited deposits that were on it.
   */
  async forgetChain(chainId: number, genesis: string): Promise<number> {
    return this.db.transaction(async (manager) => {
      const credited = rowsOf<{ id: string }>(
        await manager.query(
          `UPDATE "evm_transfers" SET "reorged" = true, "orphaned_after_credit" = true, "settled" = true,
                  "updated_at" = now()
            WHERE "chain_id" = $1 AND "direction" = 'in' AND NOT "reorged" RETURNING "transaction_id" AS "id"`,
          [chainId],
        ),
      );
      for (const table of [
        'evm_blocks',
        'evm_cursors',
        'evm_nonces',
        'evm_send_intents',
        'evm_gas_top_up_intents',
      ]) {
        await manager.query(`DELETE FROM "${table}" WHERE "chain_id" = $1`, [chainId]);
      }
      await manager.query(
        `INSERT INTO "evm_chains" ("chain_id", "genesis_hash") VALUES ($1, $2)
         ON CONFLICT ("chain_id") DO UPDATE SET "genesis_hash" = EXCLUDED."genesis_hash", "recorded_at" = now()`,
        [chainId, genesis],
      );
      return credited.length;
    });
  }

  // ---- scanning ----------------------------------------------------------------------------------------

  async cursor(chainId: number): Promise<bigint | undefined> {
    const [row] = await this.db.query(
      `SELECT "next_block" AS "next" FROM "evm_cursors" WHERE "chain_id" = $1`,
      [chainId],
    );
    return row ? BigInt(row.next) : undefined;
  }

  async storedHash(chainId: number, blockNumber: bigint): Promise<string | undefined> {
    const [row] = await this.db.query(
      `SELECT "hash" FROM "evm_blocks" WHERE "chain_id" = $1 AND "number" = $2`,
      [chainId, String(blockNumber)],
    );
    return row?.hash;
  }

  /** Stored block hashes from the newest down, for the walk back to the common ancestor of a reorg. */
  async storedBlocks(
    chainId: number,
    below: bigint,
    limit: number,
  ): Promise<{ number: bigint; hash: string }[]> {
    const rows: { number: string; hash: string }[] = await this.db.query(
      `SELECT "number", "hash" FROM "evm_blocks" WHERE "chain_id" = $1 AND "number" < $2 ORDER BY "number" DESC LIMIT $3`,
      [chainId, String(below), limit],
    );
    return rows.map((r) => ({ number: BigInt(r.number), hash: r.hash }));
  }

  /** Deposit addresses of live ETH and USDT wallets. */
  async watchedAddresses(): Promise<WatchedAddress[]> {
    return this.db.query(
      `SELECT lower(a."address") AS "address", w."id" AS "walletId", w."tenant_id" AS "tenantId",
              w."vault_id" AS "vaultId", w."asset_id" AS "assetId", s."symbol" AS "assetSymbol"
       FROM "wallet_addresses" a JOIN "wallets" w ON w."id" = a."wallet_id" JOIN "assets" s ON s."id" = w."asset_id"
       WHERE w."environment" = 'production' AND s."network" = 'ethereum'`,
    );
  }

  /**
   * Stores found deposits' chain rows in one statement, idempotently: a new transfer inserts (its id is
   * returned: the caller creates its transaction); one already known (a rescan, a restart) inserts nothing;
   * one orphaned by a reorg and found again gets its new block back (back to waiting for confirmations).
   */
  async claimDeposits(manager: EntityManager, deposits: NewDeposit[]): Promise<Set<string>> {
    if (deposits.length === 0) return new Set();
    const rows = rowsOf<{ id: string; inserted: boolean }>(
      await manager.query(
        `INSERT INTO "evm_transfers" ("transaction_id", "chain_id", "direction", "tx_hash", "log_index",
           "from_address", "to_address", "block_number", "block_hash", "confirmations")
         SELECT d."transactionId", d."chainId", 'in', d."txHash", d."logIndex", d."fromAddress", d."toAddress",
                d."blockNumber"::bigint, d."blockHash", 1
         FROM jsonb_to_recordset($1::jsonb) AS d("transactionId" uuid, "chainId" integer, "txHash" text,
           "logIndex" integer, "fromAddress" text, "toAddress" text, "blockNumber" text, "blockHash" text)
         ON CONFLICT ("chain_id", "tx_hash", "log_index") WHERE "direction" = 'in' AND NOT "reorged"
         DO UPDATE SET "block_number" = EXCLUDED."block_number", "block_hash" = EXCLUDED."block_hash",
           "orphaned_after_credit" = false, "updated_at" = now()
         WHERE "evm_transfers"."block_hash" IS NULL
         RETURNING "transaction_id" AS "id", ("xmax" = 0) AS "inserted"`,
        [
          JSON.stringify(
            deposits.map((d) => ({
              transactionId: d.transactionId,
              chainId: d.chainId,
              txHash: d.txHash,
              logIndex: d.logIndex,
              fromAddress: d.fromAddress,
              toAddress: d.toAddress,
              blockNumber: String(d.blockNumber),
              blockHash: d.blockHash,
            })),
          ),
        ],
      ),
    );
    return new Set(rows.filter((r) => r.inserted).map((r) => r.id));
  }

  /** Commits a scanned range: its block hashes and the cursor after it (old hashes pruned). */
  async advanceCursor(
    manager: EntityManager,
    chainId: number,
    blocks: { number: bigint; hash: string }[],
    next: bigint,
    keep: number,
  ): Promise<void> {
    if (blocks.length > 0) {
      await manager.query(
        `INSERT INTO "evm_blocks" ("chain_id", "number", "hash")
         SELECT $1, n, h FROM unnest($2::bigint[], $3::text[]) AS b(n, h)
         ON CONFLICT ("chain_id", "number") DO UPDATE SET "hash" = EXCLUDED."hash"`,
        [chainId, blocks.map((b) => String(b.number)), blocks.map((b) => b.hash)],
      );
    }
    await manager.query(
      `INSERT INTO "evm_cursors" ("chain_id", "next_block") VALUES ($1, $2)
       ON CONFLICT ("chain_id") DO UPDATE SET "next_block" = EXCLUDED."next_block", "updated_at" = now()`,
      [chainId, String(next)],
    );
    await manager.query(`DELETE FROM "evm_blocks" WHERE "chain_id" = $1 AND "number" < $2`, [
      chainId,
      String(next - BigInt(keep)),
    ]);
  }

  /**
   * Rewinds to the common ancestor of a reorg: hashes above it are forgotten, the cursor goes back to the
   * block after it, and deposits in the dropped blocks lose their block (orphaned until found again).
   */
  async rewind(chainId: number, ancestor: bigint): Promise<string[]> {
    return this.db.transaction(async (manager) => {
      await manager.query(`DELETE FROM "evm_blocks" WHERE "chain_id" = $1 AND "number" > $2`, [
        chainId,
        String(ancestor),
      ]);
      await manager.query(
        `INSERT INTO "evm_cursors" ("chain_id", "next_block") VALUES ($1, $2)
         ON CONFLICT ("chain_id") DO UPDATE SET "next_block" = EXCLUDED."next_block", "updated_at" = now()`,
        [chainId, String(ancestor + 1n)],
      );
      const orphaned = rowsOf<{ id: string }>(
        await manager.query(
          `UPDATE "evm_transfers" SET "block_number" = NULL, "block_hash" = NULL, "confirmations" = 0,
             "updated_at" = now()
           WHERE "chain_id" = $1 AND "direction" = 'in' AND NOT "reorged" AND "block_number" > $2
           RETURNING "transaction_id" AS "id"`,
          [chainId, String(ancestor)],
        ),
      );
      return orphaned.map((r) => r.id);
    });
  }

  /** Deposits still orphaned once the scan has caught up with the head: their transfer is gone. */
  async orphanedDeposits(chainId: number): Promise<{ transactionId: string; status: string }[]> {
    return this.db.query(
      `SELECT e."transaction_id" AS "transactionId", t."status"
       FROM "evm_transfers" e JOIN "transactions" t ON t."id" = e."transaction_id"
       WHERE e."chain_id" = $1 AND e."direction" = 'in' AND NOT e."reorged" AND e."block_hash" IS NULL
         AND NOT e."orphaned_after_credit"`,
      [chainId],
    );
  }

  /** A credited deposit orphaned by a reorg: it keeps its place in the deposit key, so it is never credited twice. */
  async flagOrphanedCredit(transactionId: string): Promise<void> {
    await this.db.query(
      `UPDATE "evm_transfers" SET "orphaned_after_credit" = true, "updated_at" = now() WHERE "transaction_id" = $1`,
      [transactionId],
    );
  }

  async markReorged(
    manager: EntityManager | undefined,
    transactionId: string,
    settled: boolean,
  ): Promise<void> {
    await (manager ?? this.db).query(
      `UPDATE "evm_transfers" SET "reorged" = true, "settled" = "settled" OR $2, "updated_at" = now()
       WHERE "transaction_id" = $1`,
      [transactionId, settled],
    );
  }

  // ---- confirmations -----------------------------------------------------------------------------------

  async openTransfers(chainId: number): Promise<OpenTransfer[]> {
    return this.db.query(
      `SELECT e."transaction_id" AS "transactionId", e."direction", t."status", t."type", e."tx_hash" AS "txHash",
              e."sent_hashes" AS "sentHashes", e."block_number" AS "blockNumber", e."block_hash" AS "blockHash",
              e."confirmations", e."nonce", e."from_address" AS "fromAddress", e."gas_limit" AS "gasLimit",
              e."max_fee_per_gas" AS "maxFeePerGas", e."max_priority_fee_per_gas" AS "maxPriorityFeePerGas",
              e."fee_held" AS "feeHeld", e."fee_wallet_id" AS "feeWalletId", e."broadcast_at" AS "broadcastAt",
              CASE WHEN i."transaction_id" IS NULL THEN NULL ELSE json_build_object(
                'transactionId', i."transaction_id", 'chainId', i."chain_id", 'fromAddress', i."from_address",
                'nonce', i."nonce"::int, 'txHash', i."tx_hash", 'rawTx', i."raw_tx",
                'gasLimit', i."gas_limit"::text, 'maxFeePerGas', i."max_fee_per_gas"::text,
                'maxPriorityFeePerGas', i."max_priority_fee_per_gas"::text) END AS "unrecordedReplacement",
              a."confirmations" AS "assetConfirmations", t."wallet_id" AS "walletId", t."tenant_id" AS "tenantId",
              t."environment", t."amount", t."destination_address" AS "destinationAddress", a."symbol" AS "assetSymbol"
       FROM "evm_transfers" e JOIN "transactions" t ON t."id" = e."transaction_id"
       JOIN "assets" a ON a."id" = t."asset_id"
       LEFT JOIN "evm_send_intents" i ON i."transaction_id" = e."transaction_id"
       WHERE e."chain_id" = $1 AND NOT e."settled" ORDER BY e."created_at"`,
      [chainId],
    );
  }

  async setChainState(
    manager: EntityManager | undefined,
    transactionId: string,
    state: {
      confirmations: number;
      blockNumber?: bigint;
      blockHash?: string;
      txHash?: string;
      settled?: boolean;
    },
  ): Promise<void> {
    await (manager ?? this.db).query(
      `UPDATE "evm_transfers" SET "confirmations" = $2, "block_number" = COALESCE($3, "block_number"),
         "block_hash" = COALESCE($4, "block_hash"), "tx_hash" = COALESCE($5, "tx_hash"),
         "settled" = "settled" OR $6, "updated_at" = now()
       WHERE "transaction_id" = $1`,
      [
        transactionId,
        state.confirmations,
        state.blockNumber === undefined ? null : String(state.blockNumber),
        state.blockHash ?? null,
        state.txHash ?? null,
        state.settled ?? false,
      ],
    );
  }

  /** Marks transfers whose transaction ended some other way (a cancel cannot reach them, a failure can). */
  async settleFinished(chainId: number): Promise<void> {
    await this.db.query(
      `UPDATE "evm_transfers" e SET "settled" = true FROM "transactions" t
       WHERE t."id" = e."transaction_id" AND e."chain_id" = $1 AND NOT e."settled"
         AND t."status" IN ('Completed', 'Failed', 'Cancelled') AND e."direction" = 'in' AND e."block_hash" IS NOT NULL`,
      [chainId],
    );
  }
}
