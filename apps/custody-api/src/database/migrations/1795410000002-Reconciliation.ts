import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Reconciliation runs and their findings (decision 0226). */
export class Reconciliation1795410000002 implements MigrationInterface {
  name = 'Reconciliation1795410000002';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "reconciliation_findings" ("id" uuid NOT NULL, "run_id" uuid NOT NULL, "wallet_id" uuid NOT NULL, "tenant_id" uuid NOT NULL, "asset_symbol" text NOT NULL, "asset_decimals" integer NOT NULL, "check" text NOT NULL, "cause" text NOT NULL, "explained" boolean NOT NULL, "expected" numeric(78,0) NOT NULL, "actual" numeric(78,0) NOT NULL, "difference" numeric(78,0) NOT NULL, "details" jsonb NOT NULL, CONSTRAINT "PK_7e5df6afc6abfed04c9d557672f" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE INDEX "reconciliation_findings_run_idx" ON "reconciliation_findings" ("run_id") ',
    );
    await queryRunner.query(
      'CREATE TABLE "reconciliation_runs" ("id" uuid NOT NULL, "trigger" text NOT NULL, "tenant_id" uuid, "status" text NOT NULL, "wallets_checked" integer NOT NULL, "chain_wallets_checked" integer NOT NULL, "differences" integer NOT NULL, "explained" integer NOT NULL, "error" text, "started_at" TIMESTAMP WITH TIME ZONE NOT NULL, "finished_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "PK_4edbdb165c9e754997036a4176a" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE INDEX "reconciliation_runs_started_idx" ON "reconciliation_runs" ("started_at") ',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX "custody"."reconciliation_runs_started_idx"');
    await queryRunner.query('DROP TABLE "reconciliation_runs"');
    await queryRunner.query('DROP INDEX "custody"."reconciliation_findings_run_idx"');
    await queryRunner.query('DROP TABLE "reconciliation_findings"');
  }
}
