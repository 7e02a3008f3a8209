import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import type { VerificationStepCheckPayload } from '@tessera/contracts';
import type { LevelEntity } from '../levels/entities/level.entity';
import { LevelsService } from '../levels/levels.service';
import { QuestionnairesService } from '../questionnaires/questionnaires.service';
import { forOperator } from './check-results';
import { identityDataCheck } from './identity-data-check';
import { questionnaireCheck } from './questionnaire-check';
import { MEDIA_CHECK_KINDS, MediaChecksService } from './media-checks.service';
import type { CheckResult, CheckSubject } from '../reviews/check-results.repository';
import { ReviewsService } from '../reviews/reviews.service';
import { ScreeningService } from '../screening/screening.service';
import { screeningCheckResult, screeningSubject } from './screening-check';

/**
 * Runs the automatic check of one submitted step (decision 0131) and records its result:
 * `submitted` -> `in_review` -> `completed` (GREEN / RED) or `awaitingOperatorReview`.
 */
@Injectable()
export class ChecksService implements OnApplicationBootstrap {
  private readonly logger = new Logger(ChecksService.name);

  constructor(
    private readonly reviews: ReviewsService,
    private readonly levels: LevelsService,
    private readonly screening: ScreeningService,
    private readonly media: MediaChecksService,
    private readonly questionnaires: QuestionnairesService,
  ) {}

  /** Loads and indexes the sanctions list at start-up rather than in the first screening. */
  onApplicationBootstrap(): void {
    this.screening.warmUp();
  }

  async checkStep(job: VerificationStepCheckPayload): Promise<'recorded' | 'skipped'> {
    if ((await this.reviews.claimStep(job.stepId)) === 'done') return 'skipped';
    const subject = await this.reviews.checkSubject(job.stepId);
    const level = subject?.levelId ? await this.levels.findById(subject.levelId) : null;
    if (!subject || !level) return 'skipped';
    const result = await this.run(subject, level);
    const outcome = await this.reviews.recordCheck({
      stepId: subject.stepId,
      applicantId: subject.applicantId,
      enrollmentId: subject.enrollmentId,
      level,
      result,
    });
    this.logger.log(
      { stepId: subject.stepId, kind: subject.kind, decision: result.decision, outcome },
      'step checked',
    );
    return outcome === 'recorded' ? 'recorded' : 'skipped';
  }

  private async run(subject: CheckSubject, level: LevelEntity): Promise<CheckResult> {
    const { kind, type, info } = subject;
    if ((MEDIA_CHECK_KINDS as readonly string[]).includes(kind)) return this.media.check(subject, level);
    switch (kind) {
      case 'personal_information':
        return identityDataCheck(level.personalInfoRequiredFields, info);
      case 'company_data':
        return identityDataCheck(level.companyRequiredFields, info);
      case 'aml':
      case 'adverse_media': {
        const subject = screeningSubject(type, info);
        if (!subject) {
          return forOperator({}, 'no name to screen: the applicant has no name on record', `${kind}.run`);
        }
        return screeningCheckResult(kind, this.screening.screen(subject));
      }
      case 'questionnaire': {
        const found = subject.enrollmentId
          ? await this.questionnaires.forEnrollment(
              subject.productId,
              level.attachedQuestionnaireId,
              subject.enrollmentId,
            )
          : null;
        if (!found) return forOperator({}, 'the level has no questionnaire to check against');
        return questionnaireCheck(found.questionnaire.questions, found.answers);
      }
      default:
        return forOperator({}, `no automatic check for ${kind} steps`);
    }
  }
}
