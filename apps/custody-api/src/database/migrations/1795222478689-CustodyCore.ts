import type { MigrationInterface, QueryRunner } from 'typeorm';

export class CustodyCore1795222478689 implements MigrationInterface {
  name = 'CustodyCore1795222478689';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "address_book" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "tenant_id" uuid NOT NULL, "environment" text NOT NULL, "asset_id" uuid NOT NULL, "address" text NOT NULL, "tag" text, "label" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_188a02dee277dd0f9e488fdf06f" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE INDEX "address_book_lookup_idx" ON "address_book" ("tenant_id", "environment", "asset_id", "address") ',
    );
    await queryRunner.query(
      'CREATE TABLE "assets" ("id" uuid NOT NULL, "symbol" text NOT NULL, "network" text NOT NULL, "decimals" integer NOT NULL, "type" text NOT NULL, "contract_address" text, "requires_tag" boolean NOT NULL DEFAULT false, "confirmations" integer NOT NULL, "enabled" boolean NOT NULL DEFAULT true, CONSTRAINT "UQ_9b4bd5b9c6fe49cd3b4342fb914" UNIQUE ("symbol"), CONSTRAINT "PK_da96729a8b113377cfb6a62439c" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE TABLE "balances" ("wallet_id" uuid NOT NULL, "total" numeric(78,0) NOT NULL DEFAULT \'0\', "available" numeric(78,0) NOT NULL DEFAULT \'0\', "pending" numeric(78,0) NOT NULL DEFAULT \'0\', "locked" numeric(78,0) NOT NULL DEFAULT \'0\', "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "balances_total_consistent" CHECK ("total" = "available" + "locked"), CONSTRAINT "balances_pending_non_negative" CHECK ("pending" >= 0), CONSTRAINT "balances_locked_non_negative" CHECK ("locked" >= 0), CONSTRAINT "balances_available_non_negative" CHECK ("available" >= 0), CONSTRAINT "PK_467f6f00fb8b7df9ac0b44ffe43" PRIMARY KEY ("wallet_id"))',
    );
    await queryRunner.query(
      'CREATE TABLE "ledger_entries" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "wallet_id" uuid NOT NULL, "transaction_id" uuid NOT NULL, "kind" text NOT NULL, "total_delta" numeric(78,0) NOT NULL, "available_delta" numeric(78,0) NOT NULL, "pending_delta" numeric(78,0) NOT NULL, "locked_delta" numeric(78,0) NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_6efcb84411d3f08b08450ae75d5" PRIMARY KEY ("id"))',
    );
    await queryRunner.query('CREATE INDEX "ledger_entries_wallet_idx" ON "ledger_entries" ("wallet_id") ');
    await queryRunner.query(
      'CREATE TABLE "api_keys" ("api_key" text NOT NULL, "tenant_id" uuid NOT NULL, "environment" text NOT NULL, "scopes" text array NOT NULL, "ip_allow_list" text array NOT NULL DEFAULT \'{}\', "secret_sealed" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "revoked_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "PK_9ccce5863aec84d045d778179de" PRIMARY KEY ("api_key"))',
    );
    await queryRunner.query('CREATE INDEX "api_keys_tenant_idx" ON "api_keys" ("tenant_id") ');
    await queryRunner.query(
      'CREATE TABLE "idempotency_keys" ("tenant_id" uuid NOT NULL, "environment" text NOT NULL, "endpoint" text NOT NULL, "key" text NOT NULL, "request_hash" text NOT NULL, "status_code" integer NOT NULL, "response" jsonb NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_b859a8fa6443e04c78c12459be3" PRIMARY KEY ("tenant_id", "environment", "endpoint", "key"))',
    );
    await queryRunner.query(
      'CREATE TABLE "transactions" ("id" uuid NOT NULL, "tenant_id" uuid NOT NULL, "environment" text NOT NULL, "type" text NOT NULL, "status" text NOT NULL, "vault_id" uuid NOT NULL, "asset_id" uuid NOT NULL, "source_wallet_id" uuid, "destination_wallet_id" uuid, "wallet_id" uuid NOT NULL, "amount" numeric(78,0) NOT NULL, "source_address" text NOT NULL, "destination_address" text NOT NULL, "destination_tag" text, "tx_hash" text, "network_fee" numeric(78,0), "fee_currency" text, "note" text, "failure_reason" text, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL, "completed_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "transactions_amount_positive" CHECK ("amount" > 0), CONSTRAINT "PK_a219afd8dd77ed80f5a862f1db9" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE INDEX "transactions_list_idx" ON "transactions" ("tenant_id", "environment", "created_at", "id") ',
    );
    await queryRunner.query(
      'CREATE TABLE "vaults" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "tenant_id" uuid NOT NULL, "environment" text NOT NULL, "external_id" text NOT NULL, "name" text NOT NULL, "status" text NOT NULL DEFAULT \'Active\', "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_487a5346fa3693a430b6d6db60c" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE INDEX "vaults_list_idx" ON "vaults" ("tenant_id", "environment", "created_at") ',
    );
    await queryRunner.query(
      'CREATE UNIQUE INDEX "vaults_external_id_key" ON "vaults" ("tenant_id", "environment", "external_id") ',
    );
    await queryRunner.query(
      'CREATE TABLE "wallet_addresses" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "wallet_id" uuid NOT NULL, "address" text NOT NULL, "tag" text, "derivation_path" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_08524168056d4ecffd439c80170" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE INDEX "wallet_addresses_wallet_idx" ON "wallet_addresses" ("wallet_id", "created_at") ',
    );
    await queryRunner.query(
      'CREATE TABLE "wallets" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "tenant_id" uuid NOT NULL, "environment" text NOT NULL, "vault_id" uuid NOT NULL, "asset_id" uuid NOT NULL, "label" text NOT NULL DEFAULT \'\', "status" text NOT NULL DEFAULT \'Active\', "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_8402e5df5a30a229380e83e4f7e" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE UNIQUE INDEX "wallets_vault_asset_key" ON "wallets" ("vault_id", "asset_id") ',
    );
    await queryRunner.query('ALTER TABLE "tenants" ADD "hd_seed_sealed" text');
    await queryRunner.query('ALTER TABLE "tenants" ADD "next_address_index" integer NOT NULL DEFAULT \'0\'');
    // Seeded assets (DECISIONS.md, "Custody API"); fixed ids so every environment agrees.
    await queryRunner.query(
      `INSERT INTO "assets" ("id", "symbol", "network", "decimals", "type", "contract_address", "requires_tag", "confirmations") VALUES
        ('a0000000-0000-4000-8000-000000000001', 'BTC', 'bitcoin', 8, 'native', NULL, false, 2),
        ('a0000000-0000-4000-8000-000000000002', 'ETH', 'ethereum', 18, 'native', NULL, false, 12),
        ('a0000000-0000-4000-8000-000000000003', 'USDT', 'ethereum', 6, 'token', '0xdAC17F958D2ee523a2206206994597C13D831ec7', false, 12),
        ('a0000000-0000-4000-8000-000000000004', 'XRP', 'ripple', 6, 'native', NULL, true, 1)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "tenants" DROP COLUMN "next_address_index"');
    await queryRunner.query('ALTER TABLE "tenants" DROP COLUMN "hd_seed_sealed"');
    await queryRunner.query('DROP INDEX "custody"."wallets_vault_asset_key"');
    await queryRunner.query('DROP TABLE "wallets"');
    await queryRunner.query('DROP INDEX "custody"."wallet_addresses_wallet_idx"');
    await queryRunner.query('DROP TABLE "wallet_addresses"');
    await queryRunner.query('DROP INDEX "custody"."vaults_external_id_key"');
    await queryRunner.query('DROP INDEX "custody"."vaults_list_idx"');
    await queryRunner.query('DROP TABLE "vaults"');
    await queryRunner.query('DROP INDEX "custody"."transactions_list_idx"');
    await queryRunner.query('DROP TABLE "transactions"');
    await queryRunner.query('DROP TABLE "idempotency_keys"');
    await queryRunner.query('DROP INDEX "custody"."api_keys_tenant_idx"');
    await queryRunner.query('DROP TABLE "api_keys"');
    await queryRunner.query('DROP INDEX "custody"."ledger_entries_wallet_idx"');
    await queryRunner.query('DROP TABLE "ledger_entries"');
    await queryRunner.query('DROP TABLE "balances"');
    await queryRunner.query('DROP TABLE "assets"');
    await queryRunner.query('DROP INDEX "custody"."address_book_lookup_idx"');
    await queryRunner.query('DROP TABLE "address_book"');
  }
}
