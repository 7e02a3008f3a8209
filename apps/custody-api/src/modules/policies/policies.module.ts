import { Module } from '@nestjs/common';
import { AssetsCoreModule, AssetsModule } from '../assets/assets.module';
import { AdminGuard } from '../tenants/admin.guard';
import { PoliciesAdminController } from './policies-admin.controller';
import { PoliciesController } from './policies.controller';
import { PoliciesRepository } from './policies.repository';
import { PoliciesService } from './policies.service';

/** Withdrawal policies: the tenant's read, the operator's read and replace, and the withdrawal gate. */
@Module({
  imports: [AssetsModule],
  controllers: [PoliciesController, PoliciesAdminController],
  providers: [PoliciesRepository, PoliciesService, AdminGuard],
  exports: [PoliciesService],
})
export class PoliciesModule {}

/** The same without the HTTP controllers (worker role, CLI). */
@Module({
  imports: [AssetsCoreModule],
  providers: [PoliciesRepository, PoliciesService],
  exports: [PoliciesService],
})
export class PoliciesCoreModule {}
