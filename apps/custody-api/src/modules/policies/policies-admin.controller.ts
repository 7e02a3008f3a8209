import { Body, Controller, Get, Param, Put, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Access } from '../../common/caller';
import { AdminGuard } from '../tenants/admin.guard';
import { PoliciesService } from './policies.service';

/** Operator API: a tenant's withdrawal policy per environment (`test` or `live`), replaced as a whole. */
@ApiExcludeController()
@Access('operator')
@UseGuards(AdminGuard)
@Controller('admin/tenants/:tenantId/policies/:environment')
export class PoliciesAdminController {
  constructor(private readonly policies: PoliciesService) {}

  @Get()
  get(@Param('tenantId') tenantId: string, @Param('environment') environment: string) {
    return this.policies.adminGet(tenantId, environment);
  }

  @Put()
  set(@Param('tenantId') tenantId: string, @Param('environment') environment: string, @Body() body: unknown) {
    return this.policies.adminSet(tenantId, environment, body);
  }
}
