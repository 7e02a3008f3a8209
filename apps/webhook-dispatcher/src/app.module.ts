import { type DynamicModule, Module } from '@nestjs/common';
import { PlatformModule, type PlatformOptions } from '@tessera/platform';
import type { Env } from './config/env';
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
          workerConcurrency: env.WEBHOOK_CONCURRENCY,
          ...overrides,
        }),
        WebhooksModule.forRoot(webhooks),
      ],
    };
  }
}
