import { type DynamicModule, Module } from '@nestjs/common';
import {
  baseEnvSchema,
  loadConfig,
  migrateServiceSchema,
  OutboxEventEntity,
  OutboxSequenceEntity,
  OutboxRelayModule,
  outboxMigrationSources,
  withOutboxMigrations,
  PlatformModule,
} from '@tessera/platform';
import type { SchemaMigrator } from '@tessera/testing';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A producing service in miniature: an outbox table in its own schema and the outbox relay. */
export class ProducerInit1700000000001 implements MigrationInterface {
  name = 'ProducerInit1700000000001';
  async up(q: QueryRunner): Promise<void> {
    await q.query(
      'CREATE TABLE "outbox" ("id" uuid NOT NULL PRIMARY KEY, "tenant_id" text NOT NULL, "event_type" text NOT NULL, "entity_type" text NOT NULL, "entity_id" text NOT NULL, "data" jsonb NOT NULL, "occurred_at" TIMESTAMP WITH TIME ZONE NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "relayed_at" TIMESTAMP WITH TIME ZONE)',
    );
    await q.query(
      'CREATE INDEX "outbox_unrelayed_idx" ON "outbox" ("created_at") WHERE "relayed_at" IS NULL',
    );
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE "outbox"');
  }
}

const producerDatabase = {
  schema: 'producer',
  entities: [OutboxEventEntity, OutboxSequenceEntity],
  migrations: withOutboxMigrations([ProducerInit1700000000001]),
};

export const producerMigrator: SchemaMigrator = {
  schema: 'producer',
  migrationsDir: __dirname,
  sources: outboxMigrationSources,
  migrate: (url) => migrateServiceSchema({ url, ...producerDatabase }),
};

@Module({})
export class ProducerModule {
  static forRoot(
    envVars: Record<string, string>,
    relay: { pollMs?: number; enabled?: boolean } = {},
  ): DynamicModule {
    const env = loadConfig(baseEnvSchema, envVars);
    return {
      module: ProducerModule,
      imports: [
        PlatformModule.forRoot({
          service: 'producer',
          env,
          errorShape: 'custody',
          database: producerDatabase,
        }),
        OutboxRelayModule.forRoot({
          source: 'custody',
          enabled: relay.enabled ?? env.OUTBOX_RELAY_ENABLED,
          pollMs: relay.pollMs,
        }),
      ],
    };
  }
}
