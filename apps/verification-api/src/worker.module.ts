import { type DynamicModule, Module } from '@nestjs/common';
import { QUEUES } from '@tessera/contracts';
import { OutboxRelayModule, PlatformModule, type PlatformOptions } from '@tessera/platform';
import type { Env } from './config/env';
import { entities, SCHEMA } from './database/database';
import { migrations } from './database/migrations';
import { ChecksModule } from './modules/checks/checks.module';

/** The verification worker role: step checks, enrollment expiry, and the outbox relay (decision 0131). */
@Module({})
export class WorkerModule {
  static forRoot(env: Env, overrides: Partial<PlatformOptions> = {}): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        PlatformModule.forRoot({
          service: 'verification-worker',
          env,
          config: env,
          errorShape: 'verification',
          database: { schema: SCHEMA, entities, migrations },
          consumes: [QUEUES.VERIFICATION_CHECKS],
          workerConcurrency: env.CHECKS_CONCURRENCY,
          ...overrides,
        }),
        ChecksModule,
        // The API relays too; several relays share the outbox safely (FOR UPDATE SKIP LOCKED).
        OutboxRelayModule.forRoot({ source: 'verification', enabled: env.OUTBOX_RELAY_ENABLED }),
      ],
    };
  }
}
