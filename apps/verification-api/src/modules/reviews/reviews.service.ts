import { Injectable } from '@nestjs/common';
import {
  type ApplicantAction,
  OPERATOR_DECIDABLE_STEP_STATUSES,
  type SandboxReviewInput,
  type StepReviewInput,
} from '@tessera/contracts';
import { badRequest, conflict, notFound, unprocessable } from '@tessera/platform';
import { z } from 'zod';
import { toApplicantStatus } from '../applicants/applicants.service';
import { requiredSteps, toStepResults } from '../applicants/step-results';
import { LevelsService } from '../levels/levels.service';
import { ProductsService } from '../products/products.service';
import { ApplicantActionsRepository } from './applicant-actions.repository';
import { type CheckResult, CheckResultsRepository } from './check-results.repository';
import { ReviewsRepository } from './reviews.repository';
import { StepDecisionsRepository } from './step-decisions.repository';
import type { LevelEntity } from '../levels/entities/level.entity';

const productIdSchema = z.uuid();

const ACTION_CONFLICTS: Record<ApplicantAction, string> = {
  reset: 'The applicant is deactivated; activate it first',
  deactivate: 'The applicant is deactivated already',
  activate: 'The applicant is not deactivated',
  blocklist: 'The applicant is blocklisted already',
  unblock: 'The applicant is not blocklisted',
};

/** Operator decisions on an applicant's steps, and the review completion they lead to. */
@Injectable()
export class ReviewsService {
  constructor(
    private readonly repository: ReviewsRepository,
    private readonly stepDecisions: StepDecisionsRepository,
    private readonly checkResults: CheckResultsRepository,
    private readonly applicantActions: ApplicantActionsRepository,
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
    const result = await this.stepDecisions.decideStep({
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
    if (result.outcome === 'frozen') throw frozenConflict(result.by);
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
    return this.checkResults.claimStep(stepId);
  }

  checkSubject(stepId: string) {
    return this.checkResults.checkSubject(stepId);
  }

  /** Records an automatic check's result; 'stale' when the step or the applicant's level moved meanwhile. */
  recordCheck(input: {
    stepId: string;
    applicantId: string;
    enrollmentId: string | null;
    level: LevelEntity;
    result: CheckResult;
  }) {
    return this.checkResults.recordCheck(input);
  }

  /**
   * POST /v1/applicants/{externalUserId}/sandbox/review for a sandbox credential (the controller answers 404
   * to production ones), on an applicant created with one (422 otherwise: a sandbox key must not decide a real
   * person, decision 0434). Each required step takes its answer from `steps`, else GREEN when another step is
   * named RED, else `reviewAnswer`; optional steps named in `steps` are decided too. RED steps carry the
   * reject type (RETRY by default), labels and comment. The review then completes as in production, or is held
   * as in production for a company with an open UBO child (decision 0443: 200, status `awaiting_user`).
   */
  async sandboxReview(productId: string, externalUserId: string, input: SandboxReviewInput) {
    const applicant = await this.repository.findApplicant(productId, externalUserId);
    if (!applicant) throw notFound('Applicant not found');
    if (!applicant.sandbox) {
      throw unprocessable(
        'Applicant was created with production credentials; a sandbox review takes only sandbox applicants',
      );
    }
    const level = applicant.levelId ? await this.levels.findById(applicant.levelId) : null;
    if (!level || requiredSteps(level).length === 0) {
      throw unprocessable('Applicant has no verification level with required steps');
    }
    const named = input.steps ?? {};
    const unknown = Object.keys(named).find((kind) => !level.steps.some((step) => step.kind === kind));
    if (unknown) throw badRequest(`steps.${unknown}: not a step of level ${level.name}`);
    const anyRed = Object.values(named).includes('RED');
    const kinds = [
      ...requiredSteps(level).map((step) => step.kind),
      ...Object.keys(named).filter((kind) => !isRequired(level, kind)),
    ];
    const decisions = kinds.map((kind) => {
      const answer = named[kind] ?? (anyRed ? 'GREEN' : input.reviewAnswer);
      const red = answer === 'RED';
      return {
        kind,
        result: {
          reviewAnswer: answer,
          reviewRejectType: red ? (input.reviewRejectType ?? 'RETRY') : null,
          rejectLabels: red ? [...new Set(input.rejectLabels ?? [])] : [],
          moderationComment: red ? (input.moderationComment ?? null) : null,
        },
      };
    });
    const redRequired = decisions.some((d) => d.result.reviewAnswer === 'RED' && isRequired(level, d.kind));
    if ((input.reviewAnswer === 'RED') !== redRequired) {
      throw badRequest('steps: a RED review needs a required step RED, a GREEN review none');
    }
    const outcome = await this.stepDecisions.sandboxReview({ applicantId: applicant.id, level, decisions });
    if (outcome === 'level_changed')
      throw conflict('The applicant moved to another level meanwhile; read it again');
    if (outcome === 'deactivated' || outcome === 'blocklisted') throw frozenConflict(outcome);
    const after = await this.repository.findApplicant(productId, externalUserId);
    const steps = await this.repository.stepProgress(applicant.id);
    return {
      ...toApplicantStatus(after ?? applicant),
      steps: toStepResults(level, steps, applicant.createdAt),
    };
  }

  /**
   * An operator action (reset, deactivate, activate, blocklist, unblock) on the applicant `externalUserId` of
   * product `productId`; 404 unknown, 409 when the applicant's state does not take it (decision 0132).
   */
  async applicantAction(productId: string, externalUserId: string, action: ApplicantAction, reason?: string) {
    if (!productIdSchema.safeParse(productId).success) throw notFound('Product not found');
    await this.products.assertProduct(productId);
    const applicant = await this.repository.findApplicant(productId, externalUserId);
    if (!applicant) throw notFound('Applicant not found');
    const level = applicant.levelId ? await this.levels.findById(applicant.levelId) : null;
    const outcome = await this.applicantActions.applicantAction({
      applicantId: applicant.id,
      action,
      reason: reason ?? null,
      level,
    });
    if (outcome === 'conflict') {
      throw conflict(ACTION_CONFLICTS[action]);
    }
    const after = await this.repository.findApplicant(productId, externalUserId);
    return { action, applicant: toApplicantStatus(after ?? applicant) };
  }

  /**
   * The operator's view of an applicant's steps: every step of the level in level order (optional ones too),
   * with labels, comments and what the automatic check found (`checkResult`: screening matches with the
   * listed entry, missing fields...).
   */
  async operatorSteps(productId: string, externalUserId: string) {
    if (!productIdSchema.safeParse(productId).success) throw notFound('Product not found');
    await this.products.assertProduct(productId);
    const applicant = await this.repository.findApplicant(productId, externalUserId);
    if (!applicant) throw notFound('Applicant not found');
    const level = applicant.levelId ? await this.levels.findById(applicant.levelId) : null;
    const stored = new Map((await this.repository.operatorSteps(applicant.id)).map((row) => [row.kind, row]));
    return {
      applicant: toApplicantStatus(applicant),
      steps: (level?.steps ?? []).map((step) => {
        const row = stored.get(step.kind);
        return {
          kind: step.kind,
          optional: step.optional,
          reviewStatus: row?.reviewStatus ?? 'pending',
          reviewAnswer: row?.reviewAnswer ?? null,
          reviewRejectType: row?.reviewRejectType ?? null,
          rejectLabels: row?.rejectLabels ?? [],
          moderationComment: row?.moderationComment ?? null,
          clientComment: row?.clientComment ?? null,
          checkResult: row?.checkResult ?? null,
          lastUpdatedAtUtc: new Date(row?.updatedAt ?? applicant.createdAt).toISOString(),
        };
      }),
    };
  }
}

const isRequired = (level: Pick<LevelEntity, 'steps'>, kind: string) =>
  requiredSteps(level).some((step) => step.kind === kind);

/** 409 for a verdict on an applicant that takes none now (decision 0435). */
function frozenConflict(by: 'deactivated' | 'blocklisted') {
  return conflict(
    by === 'deactivated'
      ? 'Applicant is deactivated; activate it first'
      : 'Applicant is blocklisted; unblock and reset it first',
  );
}
