import { Module } from '@nestjs/common';
import { ChainModule } from '../chain/chain.module';
import { AdminGuard } from '../tenants/admin.guard';
import { ReconciliationAdminController } from './reconciliation-admin.controller';
import { ReconciliationMetrics } from './reconciliation-metrics';
import { ReconciliationScheduler } from './reconciliation-scheduler';
import { ReconciliationRepository } from './reconciliation.repository';
import { ReconciliationService } from './reconciliation.service';

const core = [ReconciliationRepository, ReconciliationService, ReconciliationMetrics];

/** API role: `POST/GET /admin/reconciliations` (decision 0226). */
@Module({
  imports: [ChainModule],
  controllers: [ReconciliationAdminController],
  providers: [...core, AdminGuard],
})
export class ReconciliationModule {}

/** Worker role: the scheduled run (CUSTODY_RECONCILE_INTERVAL_MS). */
@Module({
  imports: [ChainModule],
  providers: [...core, ReconciliationScheduler],
})
export class ReconciliationSchedulingModule {}

/** CLI: the service alone. */
@Module({
  imports: [ChainModule],
  providers: core,
  exports: [ReconciliationService],
})
export class ReconciliationCoreModule {}
