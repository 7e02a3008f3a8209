import { Injectable } from '@nestjs/common';
import type { SdkTokenClaims } from '@tessera/auth';
import { type PreparedQuery, preparedQuery } from '@tessera/platform';
import { DataSource } from 'typeorm';
import type { StepProgress } from '../applicants/step-results';
import type { LevelEntity } from '../levels/entities/level.entity';
import type { StoredUpload } from '../resources/enrollment-uploads';

/** Everything one SDK call needs about its session, read in one round trip. */
export interface SdkContext {
  enrollmentId: string;
  enrollmentStatus: string;
  expiresAt: Date;
  presentation: Record<string, string | undefined>;
  /** The latest accepted upload of each page slot, by `uploadKey` (decision 0447). */
  uploads: Record<string, StoredUpload>;
  /** The enrollment's level; the applicant's current level may have moved on (the token is then refused). */
  enrollmentLevelId: string;
  applicant: {
    id: string;
    productId: string;
    externalUserId: string;
    type: 'individual' | 'company';
    levelId: string | null;
    status: string;
    sandbox: boolean;
    info: Record<string, unknown>;
    reviewAnswer: string | null;
    reviewRejectType: string | null;
  };
  level: LevelEntity;
  /** Level keys the partner claimed. */
  locked: string[];
  steps: StepProgress[];
}

const CONTEXT = `
  SELECT e.id AS "enrollmentId", e.status AS "enrollmentStatus", e.expires_at AS "expiresAt", e.presentation,
         e.uploads,
         e.level_id AS "enrollmentLevelId",
         jsonb_build_object('id', a.id, 'productId', a.product_id, 'externalUserId', a.external_user_id,
           'type', a.type, 'levelId', a.level_id, 'status', a.status, 'sandbox', a.sandbox, 'info', a.info,
           'reviewAnswer', a.review_answer, 'reviewRejectType', a.review_reject_type) AS applicant,
         jsonb_build_object('id', l.id, 'productId', l.product_id, 'name', l.name,
           'applicantType', l.applicant_type, 'isActive', l.is_active, 'isDefault', l.is_default,
           'steps', l.steps, 'attachedQuestionnaireId', l.attached_questionnaire_id,
           'personalInfoFields', l.personal_info_fields,
           'personalInfoRequiredFields', l.personal_info_required_fields,
           'companyDataFields', l.company_data_fields, 'companyRequiredFields', l.company_required_fields,
           'companyRequiredDocuments', l.company_required_documents,
           'companyDocumentsMinRequired', l.company_documents_min_required,
           'companyLegalForms', l.company_legal_forms) AS level,
         (SELECT coalesce(jsonb_agg(c.field ORDER BY c.field), '[]'::jsonb)
            FROM field_claims c WHERE c.applicant_id = a.id) AS locked,
         (SELECT coalesce(jsonb_agg(jsonb_build_object('kind', s.kind, 'reviewStatus', s.review_status,
                   'reviewAnswer', s.review_answer, 'reviewRejectType', s.review_reject_type,
                   'updatedAt', s.updated_at)), '[]'::jsonb)
            FROM applicant_steps s WHERE s.applicant_id = a.id) AS steps
    FROM enrollments e
    JOIN applicants a ON a.id = e.applicant_id
    JOIN levels l ON l.id = e.level_id
   WHERE e.id = $1 AND e.applicant_id = $2 AND e.product_id = $3`;

/** Why a session may not be used any more. */
export type SessionRefusal = 'unknown' | 'expired' | 'replaced' | 'closed' | 'deactivated';

/** What `refusal` judges: a session's enrollment and its applicant as they are now. */
export interface SessionState {
  enrollmentStatus: string;
  expiresAt: Date;
  enrollmentLevelId: string;
  applicant: { levelId: string | null; status: string };
}

/**
 * Why the session behind a context may not be used, or null when it may: no such enrollment for the token's
 * applicant and product, expired (by status or by time), replaced by a newer link or one to another level,
 * closed by an operator (`failed`), or its applicant deactivated. The guard, the SDK service and the link's
 * resolve all judge a session by this, so a link never resolves to a token that every call refuses.
 */
export function refusal(ctx: SessionState | undefined, now = Date.now()): SessionRefusal | null {
  if (!ctx) return 'unknown';
  if (ctx.enrollmentStatus === 'expired' || ctx.expiresAt.getTime() <= now) return 'expired';
  if (ctx.enrollmentStatus === 'replaced' || ctx.applicant.levelId !== ctx.enrollmentLevelId)
    return 'replaced';
  // Closed by an operator: a reset, a deactivation or a blocklisting failed it.
  if (ctx.enrollmentStatus === 'failed') return 'closed';
  if (ctx.applicant.status === 'deactivated') return 'deactivated';
  return null;
}

/**
 * The context of a hosted SDK call, read once per request (decision 0415): SdkAuthGuard loads it to decide
 * whether the token's session is usable, and the handler's first `take` gets that same read instead of making
 * a second round trip. Later `take`s of the same request (after a write) read afresh. Keyed by the verified
 * claims object, which lives as long as its request.
 */
@Injectable()
export class SessionContexts {
  private readonly prepared: PreparedQuery;
  private readonly loaded = new WeakMap<SdkTokenClaims, Promise<SdkContext | undefined>>();

  constructor(dataSource: DataSource) {
    this.prepared = preparedQuery(dataSource);
  }

  /** Reads the context and keeps it for the request's first `take`. */
  load(claims: SdkTokenClaims): Promise<SdkContext | undefined> {
    const read = this.read(claims);
    this.loaded.set(claims, read);
    return read;
  }

  /** The context the guard read for this request, once; otherwise a fresh read. */
  take(claims: SdkTokenClaims): Promise<SdkContext | undefined> {
    const kept = this.loaded.get(claims);
    this.loaded.delete(claims);
    return kept ?? this.read(claims);
  }

  private async read(claims: SdkTokenClaims): Promise<SdkContext | undefined> {
    const [row] = await this.prepared<Omit<SdkContext, 'expiresAt'> & { expiresAt: Date }>(
      'sdk_context',
      CONTEXT,
      [claims.sub, claims.aid, claims.pid],
    );
    if (!row) return undefined;
    return {
      ...row,
      steps: row.steps.map((s) => ({ ...s, updatedAt: new Date(s.updatedAt) })),
    } as SdkContext;
  }
}
