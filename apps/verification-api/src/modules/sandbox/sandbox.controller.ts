import { Body, Controller, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { sandboxReviewSchema } from '@tessera/contracts';
import { notFound } from '@tessera/platform';
import { Partner, PartnerAuthGuard } from '../auth/partner-auth.guard';
import type { PartnerContext } from '../products/products.service';
import { ApplicantsService } from '../applicants/applicants.service';
import { ReviewsService } from '../reviews/reviews.service';

@Controller('v1/applicants')
@UseGuards(PartnerAuthGuard)
export class SandboxController {
  constructor(
    private readonly applicants: ApplicantsService,
    private readonly reviews: ReviewsService,
  ) {}

  /** Completes the review with the given outcome; sandbox credentials only (production ones get 404). */
  @Post(':externalUserId/sandbox/review')
  @HttpCode(200)
  async review(
    @Partner() partner: PartnerContext,
    @Param('externalUserId') externalUserId: string,
    @Body() body: unknown,
  ) {
    if (partner.environment !== 'sandbox') throw notFound('Not found');
    const applicant = await this.applicants.resolve(partner, externalUserId);
    return this.reviews.sandboxReview(
      partner.productId,
      applicant.externalUserId,
      sandboxReviewSchema.parse(body ?? {}),
    );
  }
}
