import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { TenantsModule } from '../tenants/tenants.module';
import { SignedRequestGuard } from './signed-request.guard';

/** Installs the signed-request guard for every route of the API role. */
@Module({
  imports: [TenantsModule],
  providers: [{ provide: APP_GUARD, useClass: SignedRequestGuard }],
})
export class AuthModule {}
