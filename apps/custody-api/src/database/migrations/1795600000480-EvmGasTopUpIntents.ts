import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Gas-station top-ups' signed transactions, committed before they are sent (docs/decisions/0451). */
export class EvmGasTopUpIntents1795600000480 implements MigrationInterface {
  name = 'EvmGasTopUpIntents1795600000480';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      'CREATE TABLE "evm_gas_top_up_intents" ("chain_id" integer NOT NULL, "station_address" text NOT NULL, "nonce" bigint NOT NULL, "tx_hash" text NOT NULL, "raw_tx" text NOT NULL, "to_address" text NOT NULL, "value" numeric(78,0) NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "evm_gas_top_up_intents_pkey" PRIMARY KEY ("chain_id", "station_address", "nonce"))',
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE "evm_gas_top_up_intents"');
  }
}
