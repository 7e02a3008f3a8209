import { Controller, Get, HttpCode, Param, Post, Query, Req, UseGuards } from '@nestjs/common';
import { parsePresentation, sessionQuerySchema } from '@tessera/contracts';
import { refuseNonDecimalNumbers } from '@tessera/platform';
import type { FastifyRequest } from 'fastify';
import { RateLimitService } from '../auth/rate-limit.service';
import { Partner, PartnerAuthGuard } from '../auth/partner-auth.guard';
import type { PartnerContext } from '../products/products.service';
import { SessionsService } from './sessions.service';

/** `ttlDays` of the query: `1e1` and `0x10` are not 10 and 16 days, as for review-history's `limit` (decision 0474). */
const ttlDaysOf = (query: Record<string, unknown>): number =>
  sessionQuerySchema.parse(refuseNonDecimalNumbers(query, ['ttlDays'], 'must be an integer from 1 to 90'))
    .ttlDays;

@Controller('v1/applicants/:externalUserId')
@UseGuards(PartnerAuthGuard)
export class SessionsController {
  constructor(private readonly sessions: SessionsService) {}

  @Post('verification-sessions')
  @HttpCode(202)
  forLevel(
    @Partner() partner: PartnerContext,
    @Param('externalUserId') id: string,
    @Query() query: Record<string, unknown>,
  ) {
    const ttlDays = ttlDaysOf(query);
    const level = typeof query.verificationLevelName === 'string' ? query.verificationLevelName : undefined;
    return this.sessions.forLevel(partner, id, level, parsePresentation(query), ttlDays);
  }

  @Post('verifications')
  @HttpCode(202)
  forCurrentLevel(
    @Partner() partner: PartnerContext,
    @Param('externalUserId') id: string,
    @Query() query: Record<string, unknown>,
  ) {
    const ttlDays = ttlDaysOf(query);
    return this.sessions.forCurrentLevel(partner, id, parsePresentation(query), ttlDays);
  }
}

/** Public: the hosted SDK page trades the short code of its URL for a signed session token. */
@Controller('api/v1/sdk')
export class SdkLinksController {
  constructor(
    private readonly sessions: SessionsService,
    private readonly rateLimits: RateLimitService,
  ) {}

  /** Counted against the client IP like every SDK call (there is no token yet). */
  @Get('links/:shortCode')
  async resolve(@Param('shortCode') shortCode: string, @Req() request: FastifyRequest) {
    await this.rateLimits.sdkCall(undefined, request.ip);
    return this.sessions.resolveShortCode(shortCode);
  }
}
