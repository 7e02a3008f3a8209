import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Per-tenant asset settings (the operator's enable/disable); no row means enabled. */
export class TenantAssets1795232000000 implements MigrationInterface {
  name = 'TenantAssets1795232000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "tenant_assets" ("tenant_id" uuid NOT NULL, "asset_id" uuid NOT NULL, "enabled" boolean NOT NULL, "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_1d32866c43ca66df2024c5f3388" PRIMARY KEY ("tenant_id", "asset_id"))',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE "tenant_assets"');
  }
}
