import { type DynamicModule, Module } from '@nestjs/common';
import { PlatformModule, type PlatformOptions } from '@tessera/platform';
import { type Env, jobConcurrency } from './config/env';
import { entities, SCHEMA } from './database/database';
import { migrations } from './database/migrations';
import { QUEUES } from '@tessera/contracts';
import { WebhooksModule, type WebhooksModuleOptions } from './modules/webhooks.module';

@Module({})
export class AppModule {
  static forRoot(
    env: Env,
    overrides: Partial<PlatformOptions> = {},
    webhooks: WebhooksModuleOptions = {},
  ): DynamicModule {
    return {
      module: AppModule,
      imports: [
        PlatformModule.forRoot({
          service: 'webhook-dispatcher',
          env,
          config: env,
          errorShape: 'custody',
          database: { schema: SCHEMA, entities, migrations },
          consumes: [QUEUES.WEBHOOK_EVENTS],
          workerConcurrency: jobConcurrency(env),
          // A batch job is idempotent (inbox and unique key): after a crash it runs again, however many crashes
          // in a row, rather than being failed for good with events in it never attempted (at-least-once).
          maxStalledCount: 100,
          // A batch held by a dispatcher that died is found and run again within about 25 s instead of about
          // a minute (BullMQ's 30 s lock and 30 s check), as in the custody worker: the lock is renewed every
          // 7.5 s while a batch runs, and nothing in a batch blocks the event loop for seconds.
          lockDurationMs: 15_000,
          stalledIntervalMs: 5_000,
          ...overrides,
        }),
        WebhooksModule.forRoot(webhooks),
      ],
    };
  }
}
