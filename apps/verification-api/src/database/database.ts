import { type ServiceDatabaseOptions, OutboxEventEntity, OutboxSequenceEntity } from '@tessera/platform';
import { ApplicantStepEntity } from '../modules/applicants/entities/applicant-step.entity';
import { ApplicantEntity } from '../modules/applicants/entities/applicant.entity';
import { FieldClaimEntity } from '../modules/applicants/entities/field-claim.entity';
import { ReviewEventEntity } from '../modules/applicants/entities/review-event.entity';
import { UboEntity } from '../modules/applicants/entities/ubo.entity';
import { QuestionnaireAnswerEntity } from '../modules/questionnaires/entities/questionnaire-answer.entity';
import { QuestionnaireEntity } from '../modules/questionnaires/entities/questionnaire.entity';
import { LevelEntity } from '../modules/levels/entities/level.entity';
import { ApiKeyEntity } from '../modules/products/entities/api-key.entity';
import { ProductEntity } from '../modules/products/entities/product.entity';
import { EnrollmentEntity } from '../modules/sessions/entities/enrollment.entity';
import { migrations } from './migrations';

export const SCHEMA = 'verification';
export const entities = [
  ProductEntity,
  ApiKeyEntity,
  LevelEntity,
  ApplicantEntity,
  FieldClaimEntity,
  ApplicantStepEntity,
  ReviewEventEntity,
  UboEntity,
  EnrollmentEntity,
  QuestionnaireEntity,
  QuestionnaireAnswerEntity,
  OutboxEventEntity,
  OutboxSequenceEntity,
];

export const databaseOptions = (url: string): ServiceDatabaseOptions => ({
  url,
  schema: SCHEMA,
  entities,
  migrations,
});
