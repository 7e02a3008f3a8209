import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { appendToOutbox, type OutboxEvent } from '@tessera/platform';
import type { DataSource, EntityManager } from 'typeorm';
import type { Caller } from '../../common/caller';
import { rowsOf } from '../ledger/ledger';

export interface AddressBookRow {
  id: string;
  assetId: string;
  address: string;
  tag: string | null;
  label: string;
  createdAt: Date;
}

const COLUMNS = `"id", "asset_id" AS "assetId", "address", "tag", "label", "created_at" AS "createdAt"`;

/**
 * A withdrawal destination as the book is searched for it (the tenant's, in one environment, for one asset), spelled
 * as its TransactionRecord spells it: the record itself is passed.
 */
export interface BookDestination {
  tenantId: string;
  environment: string;
  assetId: string;
  destinationAddress: string;
  destinationTag: string | null;
}

/**
 * True when the tenant's book for the asset holds the address (an entry with the tag, or one without a tag, which
 * admits any), inside the caller's database transaction. The entry found is locked `FOR SHARE` until that
 * transaction ends, so a DELETE of it waits: a withdrawal is created (or sent) before the entry goes, or not at
 * all. The withdrawal writer and the worker's broadcast step call it (contract: "Withdrawals may only target
 * addresses that already exist in the tenant's address book").
 */
export async function holdBookEntry(manager: EntityManager, d: BookDestination): Promise<boolean> {
  const rows: unknown[] = await manager.query(
    `SELECT 1 FROM "address_book" WHERE "tenant_id" = $1 AND "environment" = $2 AND "asset_id" = $3
       AND "address" = $4 AND ("tag" IS NOT DISTINCT FROM $5 OR "tag" IS NULL) LIMIT 1 FOR SHARE`,
    [d.tenantId, d.environment, d.assetId, d.destinationAddress, d.destinationTag],
  );
  return rows.length > 0;
}

@Injectable()
export class AddressBookRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Adds the entry, or answers the id of the entry that already holds the same destination (asset, address and
   * tag, in the caller's tenant and environment) and adds nothing. Two creates of one destination take the same
   * transaction-scoped advisory lock, so the second sees the first's row (decision 0475).
   */
  async create(
    caller: Caller,
    entry: { assetId: string; address: string; tag: string | null; label: string },
    event: (row: AddressBookRow) => OutboxEvent,
  ): Promise<AddressBookRow | { existingId: string }> {
    return this.db.transaction(async (manager) => {
      const key = [caller.tenantId, caller.environment, entry.assetId, entry.address, entry.tag ?? ''].join(
        '|',
      );
      await manager.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`address_book:${key}`]);
      const existing = rowsOf<{ id: string }>(
        await manager.query(
          `SELECT "id" FROM "address_book" WHERE "tenant_id" = $1 AND "environment" = $2 AND "asset_id" = $3
             AND "address" = $4 AND "tag" IS NOT DISTINCT FROM $5 ORDER BY "created_at" LIMIT 1`,
          [caller.tenantId, caller.environment, entry.assetId, entry.address, entry.tag],
        ),
      );
      if (existing[0]) return { existingId: existing[0].id };
      const [row] = rowsOf<AddressBookRow>(
        await manager.query(
          `INSERT INTO "address_book" ("tenant_id", "environment", "asset_id", "address", "tag", "label")
           VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
          [caller.tenantId, caller.environment, entry.assetId, entry.address, entry.tag, entry.label],
        ),
      );
      await appendToOutbox(manager, [event(row)]);
      return row;
    });
  }

  list(caller: Caller, assetId?: string): Promise<AddressBookRow[]> {
    const params: unknown[] = [caller.tenantId, caller.environment];
    if (assetId) params.push(assetId);
    return this.db.query(
      `SELECT ${COLUMNS} FROM "address_book" WHERE "tenant_id" = $1 AND "environment" = $2
       ${assetId ? 'AND "asset_id" = $3' : ''} ORDER BY "created_at" DESC, "id" DESC`,
      params,
    );
  }

  async find(caller: Caller, id: string): Promise<AddressBookRow | undefined> {
    const rows: AddressBookRow[] = await this.db.query(
      `SELECT ${COLUMNS} FROM "address_book" WHERE "id" = $1 AND "tenant_id" = $2 AND "environment" = $3`,
      [id, caller.tenantId, caller.environment],
    );
    return rows[0];
  }

  async delete(caller: Caller, id: string, event: (row: AddressBookRow) => OutboxEvent): Promise<boolean> {
    return this.db.transaction(async (manager) => {
      const [row] = rowsOf<AddressBookRow>(
        await manager.query(
          `DELETE FROM "address_book" WHERE "id" = $1 AND "tenant_id" = $2 AND "environment" = $3
           RETURNING ${COLUMNS}`,
          [id, caller.tenantId, caller.environment],
        ),
      );
      if (!row) return false;
      await appendToOutbox(manager, [event(row)]);
      return true;
    });
  }
}
