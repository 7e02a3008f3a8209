import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The genesis block hash of each EVM chain id this database has worked (docs/decisions/0467). */
export class EvmChains1795600003000 implements MigrationInterface {
  name = 'EvmChains1795600003000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      'CREATE TABLE "evm_chains" ("chain_id" integer NOT NULL, "genesis_hash" text NOT NULL, "recorded_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "evm_chains_pkey" PRIMARY KEY ("chain_id"))',
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE "evm_chains"');
  }
}
