import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { RequireScope } from '../../common/caller';
import { AssetsService } from './assets.service';

@ApiTags('assets')
@ApiSecurity('signed')
@Controller('assets')
export class AssetsController {
  constructor(private readonly assets: AssetsService) {}

  @Get()
  @RequireScope('assets:read')
  @ApiOperation({ summary: 'List the enabled assets' })
  async list() {
    return { items: (await this.assets.list()).map((a) => this.assets.toDto(a)) };
  }
}
