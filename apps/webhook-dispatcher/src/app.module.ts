import { type DynamicModule, Module } from '@nestjs/common';
import { PlatformModule, type PlatformOptions, QUICK_STALL_RECOVERY } from '@tessera/platform';
import { type Env, jobConcurrency } from './config/env';
import { entities, SCHEMA, SESSION_SETTINGS } from './database/database';
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
          database: { schema: SCHEMA, entities, migrations, settings: SESSION_SETTINGS },
          consumes: [QUEUES.WEBHOOK_EVENTS],
          workerConcurrency: jobConcurrency(env),
          // A batch job is idempotent (inbox and unique key): after a crash it runs again, however many crashes
          // in a row, rather than being failed for good with events in it never attempted (at-least-once).
          maxStalledCount: 100,
          // A batch held by a dispatcher that died runs again within about 25 s: nothing in a batch blocks the
          // event loop for seconds.
          ...QUICK_STALL_RECOVERY,
          ...overrides,
        }),
        WebhooksModule.forRoot(webhooks),
      ],
    };
  }
}
