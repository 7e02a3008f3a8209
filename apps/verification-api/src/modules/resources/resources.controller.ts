import { Controller, Get, Head, Param, Post, Query, Req, Res, UseGuards } from '@nestjs/common';
import type { SdkTokenClaims } from '@tessera/auth';
import { resourceListQuerySchema } from '@tessera/contracts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Partner, PartnerAuthGuard } from '../auth/partner-auth.guard';
import type { PartnerContext } from '../products/products.service';
import { SdkAuthGuard, SdkSession } from '../sessions/sdk-auth.guard';
import { CONDITIONAL_HEADERS, type ConditionalHeaders, type MediaBytes } from './resources.repository';
import { ResourcesService } from './resources.service';

/** The partner's conditional headers for the bytes endpoint, passed on to media-store. */
function conditionalOf(request: FastifyRequest): ConditionalHeaders {
  const headers: ConditionalHeaders = {};
  for (const name of CONDITIONAL_HEADERS) {
    const value = request.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  return headers;
}

async function relay(reply: FastifyReply, bytes: MediaBytes): Promise<void> {
  reply
    .status(bytes.status)
    .header('cache-control', 'private, no-store')
    .header('x-content-type-options', 'nosniff');
  if (bytes.status === 416) {
    // An error, so in the contract's error shape: media-store's empty answer keeps only its Content-Range.
    const contentRange = bytes.headers['content-range'];
    if (contentRange) reply.header('content-range', contentRange);
    await reply.send({ message: 'The requested range is not satisfiable' });
    return;
  }
  if (bytes.status === 304) {
    // Not modified: the validators and the caching headers above, no body and no Content-Length.
    for (const name of ['etag', 'last-modified'] as const) {
      const value = bytes.headers[name];
      if (value) reply.header(name, value);
    }
    await reply.send();
    return;
  }
  reply.headers(bytes.headers);
  await reply.send(bytes.body);
}

/** Partner resources (contract "Resources"): list, bytes with HEAD, one Range and conditional GET, upload history. */
@Controller('v1/applicants/:externalUserId')
@UseGuards(PartnerAuthGuard)
export class ResourcesController {
  constructor(private readonly resources: ResourcesService) {}

  @Get('resources')
  list(
    @Partner() partner: PartnerContext,
    @Param('externalUserId') externalUserId: string,
    @Query() query: Record<string, unknown>,
  ) {
    return this.resources.partnerList(partner, externalUserId, resourceListQuerySchema.parse(query));
  }

  @Head('resources/:resourceId')
  async head(
    @Partner() partner: PartnerContext,
    @Param('externalUserId') externalUserId: string,
    @Param('resourceId') resourceId: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ) {
    await relay(
      reply,
      await this.resources.partnerBytes(partner, externalUserId, resourceId, 'HEAD', conditionalOf(request)),
    );
  }

  @Get('resources/:resourceId')
  async bytes(
    @Partner() partner: PartnerContext,
    @Param('externalUserId') externalUserId: string,
    @Param('resourceId') resourceId: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ) {
    await relay(
      reply,
      await this.resources.partnerBytes(partner, externalUserId, resourceId, 'GET', conditionalOf(request)),
    );
  }

  @Get('uploads/history')
  history(@Partner() partner: PartnerContext, @Param('externalUserId') externalUserId: string) {
    return this.resources.partnerHistory(partner, externalUserId);
  }
}

/** The hosted SDK's upload call (DECISIONS "Hosted SDK API"), authenticated by the SDK session token. */
@Controller('api/v1/sdk/uploads')
@UseGuards(SdkAuthGuard)
export class SdkUploadsController {
  constructor(private readonly resources: ResourcesService) {}

  @Post(':slot')
  async upload(
    @SdkSession() session: SdkTokenClaims,
    @Param('slot') slot: string,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const resource = await this.resources.uploadFromSdk(session, slot, request);
    reply.status(201);
    return resource;
  }
}
