import { type DynamicModule, Module } from '@nestjs/common';
import { PlatformModule, type PlatformOptions } from '@tessera/platform';
import type { Env } from './config/env';
import { entities, SCHEMA } from './database/database';
import { migrations } from './database/migrations';
import { ResourcesModule } from './modules/resources/resources.module';

@Module({})
export class AppModule {
  static forRoot(env: Env, overrides: Partial<PlatformOptions> = {}): DynamicModule {
    return {
      module: AppModule,
      imports: [
        PlatformModule.forRoot({
          service: 'media-store',
          env,
          config: env,
          errorShape: 'verification',
          database: { schema: SCHEMA, entities, migrations },
          ...overrides,
        }),
        ResourcesModule,
      ],
    };
  }
}
