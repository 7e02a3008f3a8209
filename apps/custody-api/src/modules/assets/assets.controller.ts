import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { type Caller, CurrentCaller, RequireScope } from '../../common/caller';
import { AssetsService } from './assets.service';

@ApiTags('assets')
@ApiSecurity('signed')
@Controller('assets')
export class AssetsController {
  constructor(private readonly assets: AssetsService) {}

  @Get()
  @RequireScope('assets:read')
  @ApiOperation({ summary: "List the assets enabled for the caller's tenant" })
  async list(@CurrentCaller() caller: Caller) {
    return { items: (await this.assets.listFor(caller.tenantId)).map((a) => this.assets.toDto(a)) };
  }
}
