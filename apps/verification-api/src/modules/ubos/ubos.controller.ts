import { Body, Controller, Delete, Get, Param, Patch, Post, Res, UseGuards } from '@nestjs/common';
import { parsePresentation } from '@tessera/contracts';
import { badRequest } from '@tessera/platform';
import type { FastifyReply } from 'fastify';
import { Partner, PartnerAuthGuard } from '../auth/partner-auth.guard';
import type { PartnerContext } from '../products/products.service';
import {
  declarationsSchema,
  linkBodySchema,
  parseUboIndex,
  uboCreateSchema,
  uboPatchSchema,
  withoutReadOnlyUboFields,
} from '@tessera/contracts';
import { type LinkOptions, UbosService } from './ubos.service';

const jsonObject = (body: unknown): Record<string, unknown> => {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw badRequest('Body must be a JSON object');
  return body as Record<string, unknown>;
};

const linkOptions = (body: unknown): LinkOptions => {
  const object = jsonObject(body);
  return { ...linkBodySchema.parse(object), presentation: parsePresentation(object) };
};

@Controller('v1/applicants/:externalUserId')
@UseGuards(PartnerAuthGuard)
export class UbosController {
  constructor(private readonly ubos: UbosService) {}

  @Post('ubos')
  append(@Partner() partner: PartnerContext, @Param('externalUserId') id: string, @Body() body: unknown) {
    if (body === undefined || body === null) throw badRequest('Body must be a JSON object');
    return this.ubos.append(partner, id, uboCreateSchema.parse(jsonObject(body)));
  }

  @Get('ubos')
  list(@Partner() partner: PartnerContext, @Param('externalUserId') id: string) {
    return this.ubos.list(partner, id);
  }

  @Get('ubos/:uboIndex')
  get(
    @Partner() partner: PartnerContext,
    @Param('externalUserId') id: string,
    @Param('uboIndex') index: string,
  ) {
    return this.ubos.get(partner, id, parseUboIndex(index));
  }

  @Patch('ubos/:uboIndex')
  patch(
    @Partner() partner: PartnerContext,
    @Param('externalUserId') id: string,
    @Param('uboIndex') index: string,
    @Body() body: unknown,
  ) {
    return this.ubos.patch(
      partner,
      id,
      parseUboIndex(index),
      uboPatchSchema.parse(withoutReadOnlyUboFields(jsonObject(body))),
    );
  }

  @Delete('ubos/:uboIndex')
  remove(
    @Partner() partner: PartnerContext,
    @Param('externalUserId') id: string,
    @Param('uboIndex') index: string,
  ) {
    return this.ubos.remove(partner, id, parseUboIndex(index));
  }

  /** The negative-declaration flags (hasNoUbos...); answers the company-structure shape. */
  @Patch('company-structure')
  declarations(
    @Partner() partner: PartnerContext,
    @Param('externalUserId') id: string,
    @Body() body: unknown,
  ) {
    return this.ubos.setDeclarations(partner, id, declarationsSchema.parse(jsonObject(body)));
  }

  /** 201 when the child was created, 200 (`alreadyLinked: true`) on a repeat. */
  @Post('ubos/:uboIndex/spawn-kyc')
  async spawn(
    @Partner() partner: PartnerContext,
    @Param('externalUserId') id: string,
    @Param('uboIndex') index: string,
    @Body() body: unknown,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const { created, body: result } = await this.ubos.spawn(
      partner,
      id,
      parseUboIndex(index),
      linkOptions(body),
    );
    reply.status(created ? 201 : 200);
    return result;
  }

  @Post('ubos/:uboIndex/regenerate-link')
  async regenerate(
    @Partner() partner: PartnerContext,
    @Param('externalUserId') id: string,
    @Param('uboIndex') index: string,
    @Body() body: unknown,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const result = await this.ubos.regenerate(partner, id, parseUboIndex(index), linkOptions(body));
    reply.status(200);
    return result;
  }
}
