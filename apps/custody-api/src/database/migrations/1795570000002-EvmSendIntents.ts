import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Withdrawals' signed transactions, committed before they are sent (docs/decisions/0440). */
export class EvmSendIntents1795570000002 implements MigrationInterface {
  name = 'EvmSendIntents1795570000002';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      'CREATE TABLE "evm_send_intents" ("transaction_id" uuid NOT NULL, "chain_id" integer NOT NULL, "from_address" text NOT NULL, "nonce" bigint NOT NULL, "tx_hash" text NOT NULL, "raw_tx" text NOT NULL, "gas_limit" numeric(78,0) NOT NULL, "max_fee_per_gas" numeric(78,0) NOT NULL, "max_priority_fee_per_gas" numeric(78,0) NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "evm_send_intents_pkey" PRIMARY KEY ("transaction_id"))',
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE "evm_send_intents"');
  }
}
