import { Body, Controller, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Access } from '../../common/caller';
import { idParam } from '../../common/validation';
import { AdminGuard } from './admin.guard';
import { TenantsService } from './tenants.service';

/** Operator API (DECISIONS.md, "Operating interface"). */
@ApiExcludeController()
@Access('operator')
@UseGuards(AdminGuard)
@Controller('admin')
export class AdminController {
  constructor(private readonly tenants: TenantsService) {}

  @Post('tenants')
  createTenant(@Body() body: unknown) {
    return this.tenants.createTenant(body);
  }

  @Post('tenants/:tenantId/keys')
  createKey(@Param('tenantId') tenantId: string, @Body() body: unknown) {
    return this.tenants.createKey(idParam(tenantId, 'Tenant'), body);
  }

  @Get('tenants/:tenantId/gas-station')
  gasStation(@Param('tenantId') tenantId: string) {
    return this.tenants.gasStation(idParam(tenantId, 'Tenant'));
  }

  @Post('keys/:apiKey/revoke')
  @HttpCode(200)
  revoke(@Param('apiKey') apiKey: string) {
    return this.tenants.revokeKey(apiKey);
  }
}
