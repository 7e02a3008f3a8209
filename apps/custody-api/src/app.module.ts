import { type DynamicModule, Module } from '@nestjs/common';
import { PlatformModule, type PlatformOptions } from '@tessera/platform';
import type { Env } from './config/env';
import { entities, SCHEMA } from './database/database';
import { migrations } from './database/migrations';
import { AddressBookModule } from './modules/address-book/address-book.module';
import { AssetsModule } from './modules/assets/assets.module';
import { AuthModule } from './modules/auth/auth.module';
import { ReconciliationModule } from './modules/reconciliation/reconciliation.module';
import { SwaggerDocsModule } from './modules/swagger/swagger.module';
import { TenantsModule } from './modules/tenants/tenants.module';
import { TransactionsModule } from './modules/transactions/transactions.module';
import { VaultsModule } from './modules/vaults/vaults.module';
import { webhooksModule } from './modules/webhooks/webhooks.module';

@Module({})
export class AppModule {
  static forRoot(env: Env, overrides: Partial<PlatformOptions> = {}): DynamicModule {
    return {
      module: AppModule,
      imports: [
        PlatformModule.forRoot({
          service: 'custody-api',
          env,
          config: env,
          errorShape: 'custody',
          database: { schema: SCHEMA, entities, migrations },
          ...overrides,
        }),
        AuthModule,
        TenantsModule,
        AssetsModule,
        VaultsModule,
        webhooksModule(),
        AddressBookModule,
        TransactionsModule,
        SwaggerDocsModule,
        ReconciliationModule,
      ],
    };
  }
}
