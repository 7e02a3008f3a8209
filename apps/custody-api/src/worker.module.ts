import { type DynamicModule, Module } from '@nestjs/common';
import { OutboxRelayModule, PlatformModule, type PlatformOptions } from '@tessera/platform';
import type { Env } from './config/env';
import { entities, SCHEMA } from './database/database';
import { migrations } from './database/migrations';

/** The worker role's module: platform wiring plus the consumers (none yet: the transaction machine comes next). */
@Module({})
export class WorkerModule {
  static forRoot(env: Env, overrides: Partial<PlatformOptions> = {}): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        PlatformModule.forRoot({
          service: 'custody-worker',
          env,
          config: env,
          errorShape: 'custody',
          database: { schema: SCHEMA, entities, migrations },
          consumes: [],
          ...overrides,
        }),
        // Relays committed outbox rows to webhook.events (OUTBOX_RELAY_ENABLED=false leaves it idle).
        OutboxRelayModule.forRoot({ source: 'custody', enabled: env.OUTBOX_RELAY_ENABLED }),
      ],
    };
  }
}
