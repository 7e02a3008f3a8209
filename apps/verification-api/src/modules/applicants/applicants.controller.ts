import { Body, Controller, Get, Param, Patch, Post, Query, Res, UseGuards } from '@nestjs/common';
import {
  applicantCreateSchema,
  companyInfoPatchSchema,
  personalInfoPatchSchema,
  reviewHistoryQuerySchema,
} from '@tessera/contracts';
import { badRequest, refuseNonDecimalNumbers } from '@tessera/platform';
import type { FastifyReply } from 'fastify';
import { Partner, PartnerAuthGuard } from '../auth/partner-auth.guard';
import type { PartnerContext } from '../products/products.service';
import { ApplicantsService } from './applicants.service';

const jsonObject = (body: unknown): Record<string, unknown> => {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw badRequest('Body must be a JSON object');
  return body as Record<string, unknown>;
};

@Controller('v1/applicants')
@UseGuards(PartnerAuthGuard)
export class ApplicantsController {
  constructor(private readonly applicants: ApplicantsService) {}

  /** 201 on create, 200 with the same shape when the externalUserId already exists. */
  @Post()
  async create(
    @Partner() partner: PartnerContext,
    @Body() body: unknown,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const input = applicantCreateSchema.parse(jsonObject(body));
    const { created, applicant } = await this.applicants.create(partner, input);
    reply.status(created ? 201 : 200);
    return applicant;
  }

  @Get(':externalUserId')
  get(@Partner() partner: PartnerContext, @Param('externalUserId') id: string) {
    return this.applicants.get(partner, id);
  }

  @Get(':externalUserId/company-info')
  companyInfo(@Partner() partner: PartnerContext, @Param('externalUserId') id: string) {
    return this.applicants.companyInfo(partner, id);
  }

  @Patch(':externalUserId/company-info')
  patchCompanyInfo(
    @Partner() partner: PartnerContext,
    @Param('externalUserId') id: string,
    @Body() body: unknown,
  ) {
    return this.applicants.patchCompanyInfo(partner, id, companyInfoPatchSchema.parse(jsonObject(body)));
  }

  @Patch(':externalUserId/personal-info')
  patchPersonalInfo(
    @Partner() partner: PartnerContext,
    @Param('externalUserId') id: string,
    @Body() body: unknown,
  ) {
    return this.applicants.patchPersonalInfo(partner, id, personalInfoPatchSchema.parse(jsonObject(body)));
  }

  @Get(':externalUserId/company-structure')
  companyStructure(@Partner() partner: PartnerContext, @Param('externalUserId') id: string) {
    return this.applicants.companyStructure(partner, id);
  }

  @Get(':externalUserId/status')
  status(@Partner() partner: PartnerContext, @Param('externalUserId') id: string) {
    return this.applicants.status(partner, id);
  }

  @Get(':externalUserId/steps')
  steps(@Partner() partner: PartnerContext, @Param('externalUserId') id: string) {
    return this.applicants.steps(partner, id);
  }

  @Get(':externalUserId/review-history')
  reviewHistory(
    @Partner() partner: PartnerContext,
    @Param('externalUserId') id: string,
    @Query() query: Record<string, unknown>,
  ) {
    return this.applicants.reviewHistory(
      partner,
      id,
      reviewHistoryQuerySchema.parse(
        // `1e2` and `0x10` are not 100 and 16 (decision 0474): the same 400 as any other bad limit.
        refuseNonDecimalNumbers(query, ['limit'], 'must be an integer from 1 to 200'),
      ),
    );
  }
}
