import { Controller, Get, Param, Req, Res } from '@nestjs/common';
import { AppException } from '@tessera/platform';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RateLimitService } from '../auth/rate-limit.service';
import { SDK_PAGE_HEADERS, SdkPageService } from './sdk-page.service';

/**
 * Where a link's short code sits in a path or an absolute URL (the page, and the link resolve that trades it
 * for an SDK token): access lines log it as [REDACTED] (PlatformOptions.secretPath). Holding the code is holding
 * the end user's session until the link expires, so it must not be readable from logs.
 */
export const LINK_SHORT_CODE_IN_PATH = /(?:^|\/\/[^/?#]+)\/(?:sdk|api\/v1\/sdk\/links)\/([^/?#]+)/;

/**
 * `GET /sdk/{shortCode}`: the hosted page. The HTML is the same for every code (the page reads the code from
 * its own path and trades it for a token); page loads are rate-limited per IP like SDK calls.
 */
@Controller('sdk')
export class SdkPageController {
  constructor(
    private readonly page: SdkPageService,
    private readonly rateLimits: RateLimitService,
  ) {}

  @Get(':shortCode')
  async serve(@Param('shortCode') _code: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    await this.rateLimits.sdkCall(undefined, request.ip);
    const html = this.page.document();
    if (!html) throw new AppException(503, 'The verification page is not available');
    void reply
      .headers(SDK_PAGE_HEADERS)
      .header('cache-control', 'no-store')
      .type('text/html; charset=utf-8')
      .send(html);
  }
}
