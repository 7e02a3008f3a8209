import { type DynamicModule, Module } from '@nestjs/common';
import { OutboxRelayModule, PlatformModule, type PlatformOptions } from '@tessera/platform';
import type { Env } from './config/env';
import { entities, SCHEMA } from './database/database';
import { migrations } from './database/migrations';

@Module({})
export class AppModule {
  static forRoot(env: Env, overrides: Partial<PlatformOptions> = {}): DynamicModule {
    return {
      module: AppModule,
      imports: [
        PlatformModule.forRoot({
          service: 'verification-api',
          env,
          config: env,
          errorShape: 'verification',
          database: { schema: SCHEMA, entities, migrations },
          ...overrides,
        }),
        // Relays committed outbox rows to webhook.events (OUTBOX_RELAY_ENABLED=false leaves it idle).
        OutboxRelayModule.forRoot({ source: 'verification', enabled: env.OUTBOX_RELAY_ENABLED }),
      ],
    };
  }
}
