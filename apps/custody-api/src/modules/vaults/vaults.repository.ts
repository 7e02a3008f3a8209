import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { appendToOutbox, type OutboxEvent } from '@tessera/platform';
import type { DataSource, EntityManager } from 'typeorm';
import type { Caller } from '../../common/caller';
import { afterCursor, type PageCursor } from '../../common/cursor';
import type { DerivedAddress } from '../chain/addresses';
import { rowsOf } from '../ledger/ledger';

export interface VaultRow {
  id: string;
  externalId: string;
  name: string;
  status: string;
  createdAt: Date;
}

/** A wallet with its vault, asset and first deposit address: everything events and responses show. */
export interface WalletView {
  id: string;
  tenantId: string;
  environment: string;
  vaultId: string;
  vaultExternalId: string;
  vaultName: string;
  assetId: string;
  label: string;
  status: string;
  createdAt: Date;
  depositAddress: string;
  depositTag: string | null;
}

export interface BalanceRow {
  walletId: string;
  total: string;
  available: string;
  pending: string;
  locked: string;
  updatedAt: Date;
}

const VAULT_COLUMNS = `v."id", v."external_id" AS "externalId", v."name", v."status", v."created_at" AS "createdAt"`;

const WALLET_VIEW = `
  SELECT w."id", w."tenant_id" AS "tenantId", w."environment", w."vault_id" AS "vaultId",
         v."external_id" AS "vaultExternalId", v."name" AS "vaultName", w."asset_id" AS "assetId",
         w."label", w."status", w."created_at" AS "createdAt",
         a."address" AS "depositAddress", a."tag" AS "depositTag"
  FROM "wallets" w
  JOIN "vaults" v ON v."id" = w."vault_id"
  LEFT JOIN LATERAL (
    SELECT "address", "tag" FROM "wallet_addresses" wa WHERE wa."wallet_id" = w."id"
    ORDER BY wa."created_at" LIMIT 1
  ) a ON true`;

@Injectable()
export class VaultsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Inserts a vault, or returns the existing one's id when the external id is taken. */
  async createVault(
    caller: Caller,
    externalId: string,
    name: string,
  ): Promise<{ created: VaultRow } | { existingId: string }> {
    const inserted = rowsOf<VaultRow>(
      await this.db.query(
        `INSERT INTO "vaults" AS v ("tenant_id", "environment", "external_id", "name") VALUES ($1, $2, $3, $4)
         ON CONFLICT ("tenant_id", "environment", "external_id") DO NOTHING RETURNING ${VAULT_COLUMNS}`,
        [caller.tenantId, caller.environment, externalId, name],
      ),
    );
    if (inserted[0]) return { created: inserted[0] };
    const [existing] = await this.db.query(
      `SELECT "id" FROM "vaults" WHERE "tenant_id" = $1 AND "environment" = $2 AND "external_id" = $3`,
      [caller.tenantId, caller.environment, externalId],
    );
    return { existingId: existing.id };
  }

  async findVault(caller: Caller, id: string): Promise<VaultRow | undefined> {
    const rows: VaultRow[] = await this.db.query(
      `SELECT ${VAULT_COLUMNS} FROM "vaults" v WHERE v."id" = $1 AND v."tenant_id" = $2 AND v."environment" = $3`,
      [id, caller.tenantId, caller.environment],
    );
    return rows[0];
  }

  listVaults(caller: Caller, take: number, after?: PageCursor): Promise<VaultRow[]> {
    const params: unknown[] = [caller.tenantId, caller.environment, take];
    let where = '';
    if (after) {
      params.push(after.createdAt, after.id);
      where = `AND ${afterCursor('v', 'vaults', { time: '$4', id: '$5', tenant: '$1' })}`;
    }
    return this.db.query(
      `SELECT ${VAULT_COLUMNS} FROM "vaults" v WHERE v."tenant_id" = $1 AND v."environment" = $2 ${where}
       ORDER BY v."created_at" DESC, v."id" DESC LIMIT $3`,
      params,
    );
  }

  async findWallet(caller: Caller, id: string, manager?: EntityManager): Promise<WalletView | undefined> {
    const rows: WalletView[] = await (manager ?? this.db).query(
      `${WALLET_VIEW} WHERE w."id" = $1 AND w."tenant_id" = $2 AND w."environment" = $3`,
      [id, caller.tenantId, caller.environment],
    );
    return rows[0];
  }

  listWallets(caller: Caller, vaultId: string): Promise<WalletView[]> {
    return this.db.query(
      `${WALLET_VIEW} WHERE w."vault_id" = $1 AND w."tenant_id" = $2 AND w."environment" = $3
       ORDER BY w."created_at", w."id"`,
      [vaultId, caller.tenantId, caller.environment],
    );
  }

  /**
   * One transaction: bump the tenant's address index, insert the wallet, its first address and its zero
   * balance, and append wallet.created. Returns undefined when the vault already has a wallet of the asset.
   */
  async createWallet(
    caller: Caller,
    vaultId: string,
    assetId: string,
    label: string,
    derive: (seedSealed: string, index: number) => DerivedAddress,
    event: (wallet: WalletView) => OutboxEvent,
  ): Promise<WalletView | undefined> {
    return this.db.transaction(async (manager) => {
      const inserted = rowsOf<{ id: string }>(
        await manager.query(
          `INSERT INTO "wallets" ("tenant_id", "environment", "vault_id", "asset_id", "label")
           VALUES ($1, $2, $3, $4, $5) ON CONFLICT ("vault_id", "asset_id") DO NOTHING RETURNING "id"`,
          [caller.tenantId, caller.environment, vaultId, assetId, label],
        ),
      );
      if (!inserted[0]) return undefined;
      const walletId = inserted[0].id;
      await this.insertDerivedAddress(manager, caller.tenantId, walletId, derive);
      await manager.query(`INSERT INTO "balances" ("wallet_id") VALUES ($1)`, [walletId]);
      const wallet = (await this.findWallet(caller, walletId, manager))!;
      await appendToOutbox(manager, [event(wallet)]);
      return wallet;
    });
  }

  async addAddress(
    tenantId: string,
    walletId: string,
    derive: (seedSealed: string, index: number) => DerivedAddress,
  ): Promise<DerivedAddress & { createdAt: Date }> {
    return this.db.transaction((manager) => this.insertDerivedAddress(manager, tenantId, walletId, derive));
  }

  private async insertDerivedAddress(
    manager: EntityManager,
    tenantId: string,
    walletId: string,
    derive: (seedSealed: string, index: number) => DerivedAddress,
  ): Promise<DerivedAddress & { createdAt: Date }> {
    const [tenant] = rowsOf<{ index: number; seed: string }>(
      await manager.query(
        `UPDATE "tenants" SET "next_address_index" = "next_address_index" + 1 WHERE "id" = $1
         RETURNING "next_address_index" - 1 AS "index", "hd_seed_sealed" AS "seed"`,
        [tenantId],
      ),
    );
    const derived = derive(tenant.seed, tenant.index);
    const [row] = await manager.query(
      `INSERT INTO "wallet_addresses" ("wallet_id", "address", "tag", "derivation_path") VALUES ($1, $2, $3, $4)
       RETURNING "created_at" AS "createdAt"`,
      [walletId, derived.address, derived.tag, derived.derivationPath],
    );
    return { ...derived, createdAt: row.createdAt };
  }

  listAddresses(walletId: string) {
    return this.db.query(
      `SELECT "address", "tag", "created_at" AS "createdAt" FROM "wallet_addresses" WHERE "wallet_id" = $1
       ORDER BY "created_at"`,
      [walletId],
    );
  }

  async balance(walletId: string): Promise<BalanceRow | undefined> {
    const rows: BalanceRow[] = await this.db.query(
      `SELECT "wallet_id" AS "walletId", "total", "available", "pending", "locked", "updated_at" AS "updatedAt"
       FROM "balances" WHERE "wallet_id" = $1`,
      [walletId],
    );
    return rows[0];
  }
}
