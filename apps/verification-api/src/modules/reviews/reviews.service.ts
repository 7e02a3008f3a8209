import { Injectable } from '@nestjs/common';
import { OPERATOR_DECIDABLE_STEP_STATUSES, type StepReviewInput } from '@tessera/contracts';
import { conflict, notFound } from '@tessera/platform';
import { z } from 'zod';
import { toApplicantStatus } from '../applicants/applicants.service';
import { LevelsService } from '../levels/levels.service';
import { ProductsService } from '../products/products.service';
import { type CheckResult, ReviewsRepository } from './reviews.repository';
import type { LevelEntity } from '../levels/entities/level.entity';

const productIdSchema = z.uuid();

/** Operator decisions on an applicant's steps, and the review completion they lead to. */
@Injectable()
export class ReviewsService {
  constructor(
    private readonly repository: ReviewsRepository,
    private readonly products: ProductsService,
    private readonly levels: LevelsService,
  ) {}

  /**
   * The operator's decision on step `kind` of the applicant `externalUserId` of product `productId`.
   * 404 unknown product, applicant, or a kind the applicant's level does not list; 409 when the step is
   * not in a state that takes a decision (docs/decisions/0103).
   */
  async reviewStep(productId: string, externalUserId: string, kind: string, decision: StepReviewInput) {
    if (!productIdSchema.safeParse(productId).success) throw notFound('Product not found');
    await this.products.assertProduct(productId);
    const applicant = await this.repository.findApplicant(productId, externalUserId);
    if (!applicant) throw notFound('Applicant not found');
    const level = applicant.levelId ? await this.levels.findById(applicant.levelId) : null;
    const levelStep = level?.steps.find((step) => step.kind === kind);
    if (!level || !levelStep) throw notFound(`Step ${kind} is not in the applicant's level`);
    const result = await this.repository.decideStep({
      applicantId: applicant.id,
      level,
      kind,
      decision,
      acceptedStatuses: OPERATOR_DECIDABLE_STEP_STATUSES,
      actorType: 'operator',
    });
    if (result.outcome === 'level_changed') {
      throw conflict('The applicant moved to another level meanwhile; read it again');
    }
    if (result.outcome === 'not_decidable') {
      throw conflict(
        `Step ${kind} is ${result.reviewStatus}; only a step that is ${OPERATOR_DECIDABLE_STEP_STATUSES.join(' or ')} takes a decision`,
      );
    }
    const { step } = result;
    const after = await this.repository.findApplicant(productId, externalUserId);
    return {
      step: {
        kind: step.kind,
        optional: levelStep.optional,
        reviewAnswer: step.reviewAnswer,
        reviewStatus: step.reviewStatus,
        reviewRejectType: step.reviewRejectType,
        rejectLabels: step.rejectLabels,
        moderationComment: step.moderationComment,
        clientComment: step.clientComment,
        lastUpdatedAtUtc: new Date(step.updatedAt).toISOString(),
      },
      reviewCompleted: result.reviewCompleted,
      applicant: toApplicantStatus(after ?? applicant),
    };
  }

  /** Check side (the worker): `submitted` -> `in_review`; 'done' when the step has moved on already. */
  claimStep(stepId: string) {
    return this.repository.claimStep(stepId);
  }

  checkSubject(stepId: string) {
    return this.repository.checkSubject(stepId);
  }

  /** Records an automatic check's result; 'stale' when the step or the applicant's level moved meanwhile. */
  recordCheck(input: { stepId: string; applicantId: string; level: LevelEntity; result: CheckResult }) {
    return this.repository.recordCheck(input);
  }
}
