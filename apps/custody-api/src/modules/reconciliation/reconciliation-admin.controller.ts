import { Body, Controller, Get, Param, Post, Query, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Access } from '../../common/caller';
import { idParam } from '../../common/validation';
import { AdminGuard } from '../tenants/admin.guard';
import { ReconciliationService } from './reconciliation.service';

/** Operator API: on-demand reconciliation and its reports (decision 0226). */
@ApiExcludeController()
@Access('operator')
@UseGuards(AdminGuard)
@Controller('admin/reconciliations')
export class ReconciliationAdminController {
  constructor(private readonly reconciliation: ReconciliationService) {}

  /** Runs now (body `{tenantId?}`) and answers 201 with the full report. */
  @Post()
  start(@Body() body: unknown) {
    return this.reconciliation.start(body, 'operator');
  }

  @Get()
  list(@Query() query: unknown) {
    return this.reconciliation.list(query);
  }

  @Get(':id')
  get(@Param('id') id: string) {
    return this.reconciliation.get(idParam(id, 'Reconciliation'));
  }
}
