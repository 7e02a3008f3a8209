import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The EVM chain (docs/decisions/0210–0212): scan cursor, recent block hashes, nonces per sending address, and
 * the on-chain side of each EVM transaction.
 */
export class EvmChain1795280000000 implements MigrationInterface {
  name = 'EvmChain1795280000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "evm_blocks" ("chain_id" integer NOT NULL, "number" bigint NOT NULL, "hash" text NOT NULL, CONSTRAINT "PK_760dafdbc45cfece60c7b6e0af3" PRIMARY KEY ("chain_id", "number"))',
    );
    await queryRunner.query(
      'CREATE TABLE "evm_cursors" ("chain_id" integer NOT NULL, "next_block" bigint NOT NULL, "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_fa5dbb5c674de651d6cb2d943ad" PRIMARY KEY ("chain_id"))',
    );
    await queryRunner.query(
      'CREATE TABLE "evm_nonces" ("chain_id" integer NOT NULL, "address" text NOT NULL, "next_nonce" bigint NOT NULL, CONSTRAINT "PK_7a0993165a891e082cf81e9adfd" PRIMARY KEY ("chain_id", "address"))',
    );
    await queryRunner.query(
      'CREATE TABLE "evm_transfers" ("transaction_id" uuid NOT NULL, "chain_id" integer NOT NULL, "direction" text NOT NULL, "tx_hash" text, "log_index" integer NOT NULL DEFAULT \'-1\', "from_address" text NOT NULL, "to_address" text NOT NULL, "block_number" bigint, "block_hash" text, "confirmations" integer NOT NULL DEFAULT \'0\', "reorged" boolean NOT NULL DEFAULT false, "orphaned_after_credit" boolean NOT NULL DEFAULT false, "settled" boolean NOT NULL DEFAULT false, "nonce" bigint, "gas_limit" numeric(78,0), "max_fee_per_gas" numeric(78,0), "max_priority_fee_per_gas" numeric(78,0), "fee_held" numeric(78,0), "fee_wallet_id" uuid, "sent_hashes" text array NOT NULL DEFAULT \'{}\', "broadcast_at" TIMESTAMP WITH TIME ZONE, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_ed6b9f0c7f47570b3470af7ce5d" PRIMARY KEY ("transaction_id"))',
    );
    await queryRunner.query(
      'CREATE INDEX "evm_transfers_open_idx" ON "evm_transfers" ("chain_id", "direction") WHERE NOT "settled"',
    );
    await queryRunner.query(
      'CREATE UNIQUE INDEX "evm_transfers_deposit_key" ON "evm_transfers" ("chain_id", "tx_hash", "log_index") WHERE "direction" = \'in\' AND NOT "reorged"',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX "custody"."evm_transfers_deposit_key"');
    await queryRunner.query('DROP INDEX "custody"."evm_transfers_open_idx"');
    await queryRunner.query('DROP TABLE "evm_transfers"');
    await queryRunner.query('DROP TABLE "evm_nonces"');
    await queryRunner.query('DROP TABLE "evm_cursors"');
    await queryRunner.query('DROP TABLE "evm_blocks"');
  }
}
