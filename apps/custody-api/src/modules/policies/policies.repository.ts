import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import type { Environment } from '../../common/caller';
import type { PolicyDocument } from './policy-document';

export interface PolicyRow {
  tenantId: string;
  environment: Environment;
  version: number;
  document: PolicyDocument;
  updatedAt: Date;
}

export interface ApprovalRow {
  transactionId: string;
  requestedBy: string;
  required: number;
  approvers: string[];
  status: string;
  expiresAt: Date;
  decidedAt: Date | null;
  reason: string | null;
}

export interface DecisionRow {
  transactionId: string;
  kind: string;
  rule: string | null;
  outcome: string;
  keyId: string | null;
  policyVersion: number | null;
  detail: Record<string, unknown>;
}

export interface StoredDecision extends DecisionRow {
  createdAt: Date;
}

const POLICY_COLUMNS = `"tenant_id" AS "tenantId", "environment", "version", "document", "updated_at" AS "updatedAt"`;
const APPROVAL_COLUMNS = `"transaction_id" AS "transactionId", "requested_by" AS "requestedBy", "required",
  "approvers", "status", "expires_at" AS "expiresAt", "decided_at" AS "decidedAt", "reason"`;

/** The only SQL of withdrawal policies; the `…In` methods run inside the caller's database transaction. */
@Injectable()
export class PoliciesRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async tenantExists(tenantId: string): Promise<boolean> {
    const rows: unknown[] = await this.db.query(`SELECT 1 FROM "tenants" WHERE "id" = $1`, [tenantId]);
    return rows.length > 0;
  }

  async find(tenantId: string, environment: Environment): Promise<PolicyRow | undefined> {
    return this.policyIn(this.db.manager, tenantId, environment);
  }

  async policyIn(
    manager: EntityManager,
    tenantId: string,
    environment: Environment,
  ): Promise<PolicyRow | undefined> {
    const rows: PolicyRow[] = await manager.query(
      `SELECT ${POLICY_COLUMNS} FROM "withdrawal_policies" WHERE "tenant_id" = $1 AND "environment" = $2`,
      [tenantId, environment],
    );
    return rows[0];
  }

  /** Replaces the policy; the version goes up by one (1 for the first). */
  async save(tenantId: string, environment: Environment, document: PolicyDocument): Promise<PolicyRow> {
    const rows: PolicyRow[] = await this.db.query(
      `INSERT INTO "withdrawal_policies" AS p ("tenant_id", "environment", "version", "document", "updated_at")
       VALUES ($1, $2, 1, $3::jsonb, now())
       ON CONFLICT ("tenant_id", "environment") DO UPDATE
         SET "version" = p."version" + 1, "document" = EXCLUDED."document", "updated_at" = now()
       RETURNING ${POLICY_COLUMNS}`,
      [tenantId, environment, JSON.stringify(document)],
    );
    return rows[0]!;
  }

  /** The tenant's keys among `apiKeys`, with their scopes and whether they are revoked. */
  keysOf(
    tenantId: string,
    apiKeys: string[],
  ): Promise<{ apiKey: string; environment: string; scopes: string[]; revoked: boolean }[]> {
    return this.db.query(
      `SELECT "api_key" AS "apiKey", "environment", "scopes", "revoked_at" IS NOT NULL AS "revoked"
       FROM "api_keys" WHERE "tenant_id" = $1 AND "api_key" = ANY($2::text[])`,
      [tenantId, apiKeys],
    );
  }

  /** Of `apiKeys`, those that are not revoked (the approvers who can still sign). */
  async activeKeysIn(manager: EntityManager, tenantId: string, apiKeys: string[]): Promise<Set<string>> {
    const rows: { apiKey: string }[] = await manager.query(
      `SELECT "api_key" AS "apiKey" FROM "api_keys"
       WHERE "tenant_id" = $1 AND "api_key" = ANY($2::text[]) AND "revoked_at" IS NULL`,
      [tenantId, apiKeys],
    );
    return new Set(rows.map((r) => r.apiKey));
  }

  /**
   * Base units withdrawn in the rolling 24 h window: withdrawals created in the last 24 h (database clock)
   * that still hold funds or have completed, that is every status except Failed and Cancelled.
   */
  async withdrawnIn(
    manager: EntityManager,
    scope: { walletId: string } | { vaultId: string; assetId: string },
  ): Promise<bigint> {
    const where = 'walletId' in scope ? `"wallet_id" = $1` : `"vault_id" = $1 AND "asset_id" = $2::uuid`;
    const params = 'walletId' in scope ? [scope.walletId] : [scope.vaultId, scope.assetId];
    const [row]: { units: string }[] = await manager.query(
      `SELECT COALESCE(sum("amount"), 0)::text AS "units" FROM "transactions"
       WHERE ${where} AND "type" = 'Withdrawal' AND "status" NOT IN ('Failed', 'Cancelled')
         AND "created_at" > now() - interval '24 hours'`,
      params,
    );
    return BigInt(row!.units);
  }

  /**
   * Age in seconds (database clock) of the oldest address-book entry that admits the destination (same rule as
   * the book check: an entry without a tag admits any tag); null when none does.
   */
  async bookEntryAgeIn(
    manager: EntityManager,
    who: { tenantId: string; environment: Environment },
    assetId: string,
    address: string,
    tag: string | null,
  ): Promise<{ ageSeconds: number; createdAt: Date } | null> {
    const [row]: { ageSeconds: number | null; createdAt: Date | null }[] = await manager.query(
      `SELECT extract(epoch FROM now() - min("created_at"))::float8 AS "ageSeconds", min("created_at") AS "createdAt"
       FROM "address_book" WHERE "tenant_id" = $1 AND "environment" = $2 AND "asset_id" = $3
         AND "address" = $4 AND ("tag" IS NOT DISTINCT FROM $5 OR "tag" IS NULL)`,
      [who.tenantId, who.environment, assetId, address, tag],
    );
    if (!row || row.ageSeconds === null || row.createdAt === null) return null;
    return { ageSeconds: row.ageSeconds, createdAt: row.createdAt };
  }

  async insertApprovalIn(
    manager: EntityManager,
    a: {
      transactionId: string;
      tenantId: string;
      environment: Environment;
      requestedBy: string;
      required: number;
      approvers: string[];
      windowSeconds: number;
    },
  ): Promise<void> {
    await manager.query(
      `INSERT INTO "withdrawal_approvals" ("transaction_id", "tenant_id", "environment", "requested_by",
         "required", "approvers", "status", "expires_at")
       VALUES ($1, $2, $3, $4, $5, $6::text[], 'pending', now() + make_interval(secs => $7))`,
      [a.transactionId, a.tenantId, a.environment, a.requestedBy, a.required, a.approvers, a.windowSeconds],
    );
  }

  insertDecisionsIn(manager: EntityManager, rows: DecisionRow[]): Promise<void> {
    return insertPolicyDecisions(manager, rows);
  }

  async approvalOf(
    transactionId: string,
    manager: EntityManager = this.db.manager,
  ): Promise<ApprovalRow | undefined> {
    const rows: ApprovalRow[] = await manager.query(
      `SELECT ${APPROVAL_COLUMNS} FROM "withdrawal_approvals" WHERE "transaction_id" = $1`,
      [transactionId],
    );
    return rows[0];
  }

  async decisionsOf(
    transactionId: string,
    manager: EntityManager = this.db.manager,
  ): Promise<StoredDecision[]> {
    return manager.query(
      `SELECT "transaction_id" AS "transactionId", "kind", "rule", "outcome", "key_id" AS "keyId",
         "policy_version" AS "policyVersion", "detail", "created_at" AS "createdAt"
       FROM "policy_decisions" WHERE "transaction_id" = $1 ORDER BY "created_at", "id"`,
      [transactionId],
    );
  }
}

/**
 * Appends decisions inside the caller's database transaction (also used by the approvals repository, which
 * owns the approve, reject and expiry writes). Rows keep their order: created_at grows by a microsecond per row.
 */
export async function insertPolicyDecisions(manager: EntityManager, rows: DecisionRow[]): Promise<void> {
  if (rows.length === 0) return;
  await manager.query(
    `INSERT INTO "policy_decisions" ("transaction_id", "kind", "rule", "outcome", "key_id", "policy_version",
       "detail", "created_at")
     SELECT (d.v->>'transactionId')::uuid, d.v->>'kind', d.v->>'rule', d.v->>'outcome', d.v->>'keyId',
       (d.v->>'policyVersion')::int, COALESCE(d.v->'detail', '{}'::jsonb),
       clock_timestamp() + d.o * interval '1 microsecond'
     FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS d(v, o)`,
    [JSON.stringify(rows)],
  );
}
