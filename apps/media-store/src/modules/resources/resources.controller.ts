import {
  Body,
  Controller,
  createParamDecorator,
  type ExecutionContext,
  Get,
  Head,
  HttpCode,
  Param,
  Post,
  Put,
  Query,
  Req,
  Res,
  UseGuards,
} from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { resourceKeySchema, stagedTicketSchema, uploadTargetSchema } from './dto';
import { InternalAuthGuard } from './internal-auth.guard';
import { ResourcesService, type UploadTarget } from './resources.service';
import { ifNoneMatchHolds, ifRangeHolds, parseRange } from './upload-meter';

/**
 * The upload a route names: `{enrollmentId}/{slot}` from the path, the owner (`productId`, `applicantId`) and the
 * labels from the query, parsed once for the plain and staged PUTs, the commit and the discard. 400 when invalid.
 */
const Target = createParamDecorator((_data: unknown, context: ExecutionContext): UploadTarget => {
  const request = context.switchToHttp().getRequest<FastifyRequest>();
  return uploadTargetSchema.parse({
    ...(request.query as Record<string, string>),
    ...(request.params as Record<string, string>),
  });
});

/**
 * Internal HTTP API for the bytes (decision 0111). PUT streams an upload in (raw body, any declared type) and
 * records it; PUT .../staged streams it in and answers a ticket, which POST .../commits records and
 * POST .../discards throws away (decision 0457); GET streams it out with one optional Range, or answers 304
 * when If-None-Match names it (decision 0487); HEAD answers the same headers without the body.
 */
@Controller('internal/v1/resources')
@UseGuards(InternalAuthGuard)
export class ResourcesController {
  constructor(private readonly resources: ResourcesService) {}

  @Put(':enrollmentId/:slot')
  async upload(
    @Target() target: UploadTarget,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const resource = await this.resources.upload(target, request.raw);
    reply.status(201);
    return resource;
  }

  @Put(':enrollmentId/:slot/staged')
  async stage(
    @Target() target: UploadTarget,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const ticket = await this.resources.stage(target, request.raw);
    reply.status(201);
    return { ticket };
  }

  @Post(':enrollmentId/:slot/commits')
  @HttpCode(201)
  commit(@Target() target: UploadTarget, @Body() body: unknown) {
    return this.resources.commit(target, stagedTicketSchema.parse(body).ticket);
  }

  @Post(':enrollmentId/:slot/discards')
  @HttpCode(204)
  async discard(@Target() target: UploadTarget, @Body() body: unknown): Promise<void> {
    await this.resources.discard(target, stagedTicketSchema.parse(body).ticket);
  }

  @Head(':enrollmentId/:slot/:seq')
  head(
    @Param() params: Record<string, string>,
    @Query() query: Record<string, string>,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ) {
    return this.send(params, query, request, reply, false);
  }

  @Get(':enrollmentId/:slot/:seq')
  bytes(
    @Param() params: Record<string, string>,
    @Query() query: Record<string, string>,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ) {
    return this.send(params, query, request, reply, true);
  }

  private async send(
    params: Record<string, string>,
    query: Record<string, string>,
    request: FastifyRequest,
    reply: FastifyReply,
    withBody: boolean,
  ): Promise<void> {
    const { resource, storageKey } = await this.resources.find(
      resourceKeySchema.parse({ ...query, ...params }),
    );
    const size = resource.sizeBytes;
    const etag = `"${resource.sha256}"`;
    const lastModified = new Date(resource.addedAtUtc).toUTCString();
    reply.header('etag', etag).header('last-modified', lastModified);
    const ifNoneMatch = request.headers['if-none-match'];
    if (ifNoneMatchHolds(typeof ifNoneMatch === 'string' ? ifNoneMatch : undefined, etag)) {
      // The client holds these bytes (RFC 9110 §13.1.2, §15.4.5): the validators, no body, no Range.
      await reply.status(304).send();
      return;
    }
    reply.header('content-type', resource.mime).header('accept-ranges', 'bytes');
    const ifRange = request.headers['if-range'];
    const range = ifRangeHolds(typeof ifRange === 'string' ? ifRange : undefined, { etag, lastModified })
      ? parseRange(request.headers.range, size)
      : undefined;
    if (range === 'unsatisfiable') {
      await reply.status(416).header('content-range', `bytes */${size}`).header('content-length', 0).send();
      return;
    }
    if (range) reply.status(206).header('content-range', `bytes ${range.start}-${range.end}/${size}`);
    reply.header('content-length', range ? range.end - range.start + 1 : size);
    if (!withBody) {
      await reply.send();
      return;
    }
    await reply.send(await this.resources.read(storageKey, range));
  }
}
