import { type DynamicModule, Module } from '@nestjs/common';
import { OutboxRelayModule, PlatformModule, type PlatformOptions } from '@tessera/platform';
import type { Env } from './config/env';
import { webhooksModule } from './modules/webhooks/webhooks.module';
import { entities, SCHEMA } from './database/database';
import { migrations } from './database/migrations';
import { AdminModule } from './modules/admin/admin.module';
import { DocsModule } from './modules/docs/docs.module';
import { ApplicantsModule } from './modules/applicants/applicants.module';
import { LevelsModule } from './modules/levels/levels.module';
import { SandboxModule } from './modules/sandbox/sandbox.module';
import { SessionsModule } from './modules/sessions/sessions.module';
import { QuestionnairesModule } from './modules/questionnaires/questionnaires.module';
import { LINK_SHORT_CODE_IN_PATH } from './modules/sdk/sdk-page.controller';
import { sdkPagePlugins } from './modules/sdk/sdk-page.service';
import { SdkModule } from './modules/sdk/sdk.module';
import {
  multipartOnlyOnUploads,
  multipartPlugin,
  ResourcesModule,
} from './modules/resources/resources.module';
import { UbosModule } from './modules/ubos/ubos.module';

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
          httpPlugins: [multipartPlugin(env), multipartOnlyOnUploads, ...sdkPagePlugins()],
          secretPath: LINK_SHORT_CODE_IN_PATH,
          ...overrides,
        }),
        AdminModule,
        LevelsModule,
        ApplicantsModule,
        SessionsModule,
        QuestionnairesModule,
        SdkModule,
        SandboxModule,
        ResourcesModule,
        UbosModule,
        webhooksModule(),
        DocsModule,
        // Relays committed outbox rows to webhook.events (OUTBOX_RELAY_ENABLED=false leaves it idle).
        OutboxRelayModule.forRoot({ source: 'verification', enabled: env.OUTBOX_RELAY_ENABLED }),
      ],
    };
  }
}
