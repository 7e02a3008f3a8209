import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Withdrawal policies, their approval requests and the decision audit (docs/decisions/0220). */
export class WithdrawalPolicies1795400000000 implements MigrationInterface {
  name = 'WithdrawalPolicies1795400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "policy_decisions" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "transaction_id" uuid NOT NULL, "kind" text NOT NULL, "rule" text, "outcome" text NOT NULL, "key_id" text, "policy_version" integer, "detail" jsonb NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT clock_timestamp(), CONSTRAINT "PK_e84f16dd2abc18df0d564940257" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE UNIQUE INDEX "policy_decisions_one_vote_key" ON "policy_decisions" ("transaction_id", "key_id") WHERE "kind" IN (\'approval\', \'rejection\')',
    );
    await queryRunner.query(
      'CREATE INDEX "policy_decisions_transaction_idx" ON "policy_decisions" ("transaction_id", "created_at") ',
    );
    await queryRunner.query(
      'CREATE TABLE "withdrawal_approvals" ("transaction_id" uuid NOT NULL, "tenant_id" uuid NOT NULL, "environment" text NOT NULL, "requested_by" text NOT NULL, "required" integer NOT NULL, "approvers" text array NOT NULL, "status" text NOT NULL, "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, "decided_at" TIMESTAMP WITH TIME ZONE, "reason" text, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_2a438b12d2609156a59104e1692" PRIMARY KEY ("transaction_id"))',
    );
    await queryRunner.query(
      'CREATE INDEX "withdrawal_approvals_pending_idx" ON "withdrawal_approvals" ("expires_at") WHERE "status" = \'pending\'',
    );
    await queryRunner.query(
      'CREATE TABLE "withdrawal_policies" ("tenant_id" uuid NOT NULL, "environment" text NOT NULL, "version" integer NOT NULL, "document" jsonb NOT NULL, "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_d3427d02a3869e612da476cad1d" PRIMARY KEY ("tenant_id", "environment"))',
    );
    await queryRunner.query(
      'CREATE INDEX "transactions_withdrawal_vault_window_idx" ON "transactions" ("vault_id", "asset_id", "created_at") WHERE "type" = \'Withdrawal\'',
    );
    await queryRunner.query(
      'CREATE INDEX "transactions_withdrawal_wallet_window_idx" ON "transactions" ("wallet_id", "created_at") WHERE "type" = \'Withdrawal\'',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX "custody"."transactions_withdrawal_wallet_window_idx"');
    await queryRunner.query('DROP INDEX "custody"."transactions_withdrawal_vault_window_idx"');
    await queryRunner.query('DROP TABLE "withdrawal_policies"');
    await queryRunner.query('DROP INDEX "custody"."withdrawal_approvals_pending_idx"');
    await queryRunner.query('DROP TABLE "withdrawal_approvals"');
    await queryRunner.query('DROP INDEX "custody"."policy_decisions_transaction_idx"');
    await queryRunner.query('DROP INDEX "custody"."policy_decisions_one_vote_key"');
    await queryRunner.query('DROP TABLE "policy_decisions"');
  }
}
