/**
 * The review primitives every review repository builds on: the applicant as the operator addresses it, its row
 * lock, its stored steps, and its review events. The writes that decide and complete reviews live beside it:
 * step-decisions, check-results, applicant-actions and review-completion.
 */
import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { StepOutcome } from './review-rules';

/** An applicant as the operator addresses it (product + externalUserId), with its review columns. */
export interface ReviewTarget {
  id: string;
  productId: string;
  externalUserId: string;
  levelId: string | null;
  levelName: string | null;
  status: string;
  riskLevel: string;
  attempt: number;
  reviewAnswer: string | null;
  reviewRejectType: string | null;
  rejectLabels: string[];
  moderationComment: string | null;
  reviewedAt: Date | null;
  createdAt: Date;
  /** Created through a sandbox credential: only such applicants take a sandbox review (decision 0434). */
  sandbox: boolean;
}

/** The applicant row as a review transaction holds it (locked FOR UPDATE). */
export interface LockedApplicant {
  id: string;
  productId: string;
  externalUserId: string;
  type: 'individual' | 'company';
  levelId: string | null;
  status: string;
  /** The verdict it holds now (null before its first): what a new verdict is compared with. */
  reviewAnswer: string | null;
  reviewRejectType: string | null;
  parentApplicantId: string | null;
  sandbox: boolean;
  blocklisted: boolean;
  createdAt: Date;
}

/**
 * Why the applicant takes no verdict now: deactivated (until activated) or blocklisted (its verdict is the
 * blocklist's RED FINAL until unblocked and reset); null when it does. A check that finishes meanwhile still
 * records its step, but completes no review (decision 0435).
 */
export function frozenBy(
  applicant: Pick<LockedApplicant, 'status' | 'blocklisted'>,
): 'deactivated' | 'blocklisted' | null {
  if (applicant.status === 'deactivated') return 'deactivated';
  return applicant.blocklisted ? 'blocklisted' : null;
}

/** Rows of an UPDATE … RETURNING (TypeORM answers `[rows, rowCount]` for UPDATE statements). */
export async function updateReturning<T>(
  manager: EntityManager,
  sql: string,
  params: unknown[],
): Promise<T[]> {
  const [rows] = await manager.query<[T[], number]>(sql, params);
  return rows;
}

export const STEP_COLUMNS = `kind, review_status AS "reviewStatus", review_answer AS "reviewAnswer",
  review_reject_type AS "reviewRejectType", reject_labels AS "rejectLabels",
  moderation_comment AS "moderationComment", client_comment AS "clientComment", updated_at AS "updatedAt"`;

@Injectable()
export class ReviewsRepository {
  constructor(private readonly dataSource: DataSource) {}

  async findApplicant(productId: string, externalUserId: string): Promise<ReviewTarget | undefined> {
    const [row] = await this.dataSource.query<ReviewTarget[]>(
      `SELECT a.id, a.product_id AS "productId", a.external_user_id AS "externalUserId", a.level_id AS "levelId",
              l.name AS "levelName", a.status, a.risk_level AS "riskLevel", a.attempt,
              a.review_answer AS "reviewAnswer", a.review_reject_type AS "reviewRejectType",
              a.reject_labels AS "rejectLabels", a.moderation_comment AS "moderationComment",
              a.reviewed_at AS "reviewedAt", a.created_at AS "createdAt", a.sandbox
         FROM applicants a LEFT JOIN levels l ON l.id = a.level_id
        WHERE a.external_user_id = $1 AND a.product_id = $2`,
      [externalUserId, productId],
    );
    return row;
  }

  /** Locks the applicant row for the rest of the transaction. */
  async lockApplicant(manager: EntityManager, applicantId: string): Promise<LockedApplicant | undefined> {
    const [row] = await manager.query<LockedApplicant[]>(
      `SELECT id, product_id AS "productId", external_user_id AS "externalUserId", type, level_id AS "levelId",
              status, review_answer AS "reviewAnswer", review_reject_type AS "reviewRejectType",
              parent_applicant_id AS "parentApplicantId", sandbox, blocklisted, created_at AS "createdAt"
         FROM applicants WHERE id = $1 FOR UPDATE`,
      [applicantId],
    );
    return row;
  }

  /** Every stored step of the applicant with what decided it, for the operator (check results included). */
  operatorSteps(
    applicantId: string,
  ): Promise<(StepOutcome & { checkResult: Record<string, unknown> | null })[]> {
    return this.dataSource.query(
      `SELECT ${STEP_COLUMNS}, check_result AS "checkResult" FROM applicant_steps WHERE applicant_id = $1`,
      [applicantId],
    );
  }

  /** The applicant's stored step progress. */
  stepProgress(applicantId: string): Promise<StepOutcome[]> {
    return this.steps(this.dataSource.manager, applicantId);
  }

  /** The applicant's stored steps, inside the caller's transaction. */
  steps(manager: EntityManager, applicantId: string): Promise<StepOutcome[]> {
    return manager.query<StepOutcome[]>(
      `SELECT ${STEP_COLUMNS} FROM applicant_steps WHERE applicant_id = $1`,
      [applicantId],
    );
  }
}
