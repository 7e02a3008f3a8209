import { Body, Controller, Get, HttpCode, Param, Patch, Post, UseGuards } from '@nestjs/common';
import {
  APPLICANT_ACTIONS,
  applicantActionSchema,
  keyCreateSchema,
  levelCreateSchema,
  levelPatchSchema,
  productCreateSchema,
  stepReviewSchema,
} from '@tessera/contracts';
import { z } from 'zod';
import { AdminAuthGuard } from '../auth/admin-auth.guard';
import { LevelsService } from '../levels/levels.service';
import { ProductsService } from '../products/products.service';
import { QuestionnairesService } from '../questionnaires/questionnaires.service';
import { ReviewsService } from '../reviews/reviews.service';

const uuid = z.uuid({ error: 'productId must be a UUID' });
const action = z.enum(APPLICANT_ACTIONS, { error: `action must be one of ${APPLICANT_ACTIONS.join(', ')}` });

/** Operator API (DECISIONS "Operating interface"): products, keys, levels and step review decisions. */
@Controller('admin/v1')
@UseGuards(AdminAuthGuard)
export class AdminController {
  constructor(
    private readonly products: ProductsService,
    private readonly levels: LevelsService,
    private readonly reviews: ReviewsService,
    private readonly questionnaires: QuestionnairesService,
  ) {}

  @Post('products')
  createProduct(@Body() body: unknown) {
    return this.products.createProduct(productCreateSchema.parse(body ?? {}).name);
  }

  @Post('products/:productId/keys')
  createKey(@Param('productId') productId: string, @Body() body: unknown) {
    return this.products.issueKey(uuid.parse(productId), keyCreateSchema.parse(body ?? {}).environment);
  }

  @Post('keys/:apiKey/deactivate')
  @HttpCode(200)
  async deactivateKey(@Param('apiKey') apiKey: string) {
    await this.products.deactivateKey(apiKey);
    return { apiKey, active: false };
  }

  @Post('products/:productId/levels')
  async createLevel(@Param('productId') productId: string, @Body() body: unknown) {
    await this.products.assertProduct(uuid.parse(productId));
    const input = levelCreateSchema.parse(body ?? {});
    await this.questionnaires.assertExists(productId, input.attachedQuestionnaireId);
    return this.levels.create(productId, input);
  }

  @Patch('products/:productId/levels/:levelName')
  async updateLevel(
    @Param('productId') productId: string,
    @Param('levelName') levelName: string,
    @Body() body: unknown,
  ) {
    await this.products.assertProduct(uuid.parse(productId));
    const patch = levelPatchSchema.parse(body ?? {});
    await this.questionnaires.assertExists(productId, patch.attachedQuestionnaireId);
    return this.levels.update(productId, levelName, patch);
  }

  /** The operator's decision on one step; may complete the applicant's review (docs/decisions/0103). */
  @Post('products/:productId/applicants/:externalUserId/steps/:kind/review')
  @HttpCode(200)
  reviewStep(
    @Param('productId') productId: string,
    @Param('externalUserId') externalUserId: string,
    @Param('kind') kind: string,
    @Body() body: unknown,
  ) {
    return this.reviews.reviewStep(productId, externalUserId, kind, stepReviewSchema.parse(body ?? {}));
  }

  /** The applicant's steps as the operator reviews them, with what the checks found (screening matches...). */
  @Get('products/:productId/applicants/:externalUserId/steps')
  operatorSteps(@Param('productId') productId: string, @Param('externalUserId') externalUserId: string) {
    return this.reviews.operatorSteps(productId, externalUserId);
  }

  /** Operator actions on an applicant: reset, deactivate, activate, blocklist, unblock (decision 0132). */
  @Post('products/:productId/applicants/:externalUserId/:action')
  @HttpCode(200)
  applicantAction(
    @Param('productId') productId: string,
    @Param('externalUserId') externalUserId: string,
    @Param('action') name: string,
    @Body() body: unknown,
  ) {
    return this.reviews.applicantAction(
      productId,
      externalUserId,
      action.parse(name),
      applicantActionSchema.parse(body ?? {}).reason,
    );
  }
}
