import { Controller, Get, Param, Query, UseGuards } from '@nestjs/common';
import { levelListQuerySchema } from '@tessera/contracts';
import { Partner, PartnerAuthGuard } from '../auth/partner-auth.guard';
import type { PartnerContext } from '../products/products.service';
import { LevelsService, toLevelDetail } from './levels.service';

@Controller('v1/levels')
@UseGuards(PartnerAuthGuard)
export class LevelsController {
  constructor(private readonly levels: LevelsService) {}

  @Get()
  list(@Partner() partner: PartnerContext, @Query() query: Record<string, unknown>) {
    const { type, includeInactive } = levelListQuerySchema.parse(query);
    return this.levels.list(partner.productId, type, includeInactive);
  }

  @Get(':levelName')
  async get(@Partner() partner: PartnerContext, @Param('levelName') name: string) {
    return toLevelDetail(await this.levels.get(partner.productId, name));
  }
}
