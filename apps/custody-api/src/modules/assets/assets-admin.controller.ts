import { Controller, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Access } from '../../common/caller';
import { idParam } from '../../common/validation';
import { AdminGuard } from '../tenants/admin.guard';
import { AssetsService } from './assets.service';

/** Operator API: per-tenant asset enable/disable (DECISIONS.md, "Operating interface"). */
@ApiExcludeController()
@Access('operator')
@UseGuards(AdminGuard)
@Controller('admin/tenants/:tenantId/assets')
export class AssetsAdminController {
  constructor(private readonly assets: AssetsService) {}

  @Get()
  list(@Param('tenantId') tenantId: string) {
    return this.assets.tenantAssets(idParam(tenantId, 'Tenant'));
  }

  @Post(':assetId/disable')
  @HttpCode(200)
  disable(@Param('tenantId') tenantId: string, @Param('assetId') assetId: string) {
    return this.assets.setEnabledFor(idParam(tenantId, 'Tenant'), assetId, false);
  }

  @Post(':assetId/enable')
  @HttpCode(200)
  enable(@Param('tenantId') tenantId: string, @Param('assetId') assetId: string) {
    return this.assets.setEnabledFor(idParam(tenantId, 'Tenant'), assetId, true);
  }
}
