import { Module } from '@nestjs/common';
import { CacheInvalidationModule } from '@tessera/platform';
import { AdminGuard } from '../tenants/admin.guard';
import { AssetsAdminController } from './assets-admin.controller';
import { AssetsController } from './assets.controller';
import { AssetsRepository } from './assets.repository';
import { AssetsService } from './assets.service';

@Module({
  imports: [CacheInvalidationModule],
  controllers: [AssetsController, AssetsAdminController],
  providers: [AssetsRepository, AssetsService, AdminGuard],
  exports: [AssetsService],
})
export class AssetsModule {}

/** Asset lookups and per-tenant settings without the HTTP controllers (worker role, CLI). */
@Module({
  imports: [CacheInvalidationModule],
  providers: [AssetsRepository, AssetsService],
  exports: [AssetsService],
})
export class AssetsCoreModule {}
