import { Inject, Injectable } from '@nestjs/common';
import {
  COMPANY_DATA_BASELINE,
  COUNTRY_CODE_MESSAGE,
  emailAddress,
  isCountryCode,
  isPastDate,
  PAST_DATE_MESSAGE,
  PERSONAL_INFO_BASELINE,
  SDK_SERVER_STEP_KINDS,
  sdkPersonalInfoValueSchema,
  VERIFICATION_STEP_KINDS,
} from '@tessera/contracts';
import { badRequest, conflict, notFound, unauthorized } from '@tessera/platform';
import { verificationSubmitted } from '../sessions/open-session-lock';
import type { SdkTokenClaims } from '@tessera/auth';
import { toStepResults } from '../applicants/step-results';
import { QuestionnairesService } from '../questionnaires/questionnaires.service';
import { SDK_MEDIA_SOURCE, type SdkMediaSource } from './sdk-media';
import { refusal, type SdkContext, type SessionRefusal, SessionContexts } from '../sessions/session-contexts';
import { SdkRepository, STEP_IN_STATES } from './sdk.repository';
import { openStepUploads } from './session-uploads';
import { isMediaStep, missingField, missingUpload, takesUserInput } from './step-requirements';

const DATE_KEYS = new Set(['dateOfBirth', 'incorporatedOn']);
const COUNTRY_KEYS = new Set(['nationality', 'country', 'registrationCountry']);

interface FieldSet {
  enabled: string[];
  required: string[];
}

const hasStep = (ctx: SdkContext, kind: string) => ctx.level.steps.some((s) => s.kind === kind);

/** Enabled and required level keys of the personal-info form (the baseline when the level customises none). */
function personalFields(ctx: SdkContext): FieldSet {
  if (ctx.applicant.type === 'company' && !hasStep(ctx, 'personal_information')) {
    return { enabled: [], required: [] };
  }
  const enabled =
    ctx.level.personalInfoFields.length > 0 ? ctx.level.personalInfoFields : PERSONAL_INFO_BASELINE;
  const company = ctx.applicant.type === 'company' ? new Set(companyFields(ctx)!.enabled) : new Set<string>();
  return {
    enabled: enabled.filter((f) => !company.has(f)),
    required: ctx.level.personalInfoRequiredFields.filter((f) => !company.has(f)),
  };
}

function companyFields(ctx: SdkContext): FieldSet | null {
  if (ctx.applicant.type !== 'company') return null;
  const enabled =
    ctx.level.companyDataFields.length > 0 ? ctx.level.companyDataFields : COMPANY_DATA_BASELINE;
  return { enabled, required: ctx.level.companyRequiredFields };
}

const pick = (info: Record<string, unknown>, keys: string[]) =>
  Object.fromEntries(keys.filter((k) => info[k] !== undefined && info[k] !== null).map((k) => [k, info[k]]));

/** A value the user typed, normalised; an error message when it cannot be stored under its key. */
function checkValue(key: string, value: string | null): { value: string | null } | { error: string } {
  if (value === null) return { value: null };
  const text = value.trim();
  if (text === '') return { value: null };
  if (DATE_KEYS.has(key) && !isPastDate(text)) return { error: PAST_DATE_MESSAGE };
  if (COUNTRY_KEYS.has(key) && !isCountryCode(text)) return { error: COUNTRY_CODE_MESSAGE };
  // The same rule as a partner's claim (applicant create and PATCH, UBO rows).
  if (key === 'email' && !emailAddress.safeParse(text).success) return { error: 'must be an email address' };
  return { value: COUNTRY_KEYS.has(key) ? text.toUpperCase() : text };
}

/**
 * Whether a submitted value is the stored one. Country codes compare in any case: the SDK upper-cases what the
 * user types, while a partner's claimed `de` is stored as sent, and resubmitting it unchanged is not a change.
 */
function sameAsStored(key: string, stored: unknown, value: unknown): boolean {
  const norm = (v: unknown) => (COUNTRY_KEYS.has(key) && typeof v === 'string' ? v.toUpperCase() : v);
  return JSON.stringify(norm(stored ?? null)) === JSON.stringify(norm(value));
}

/** The 409 of a write to a session that is no longer open (submitted; or replaced or closed since it was read). */

/** The 401 message of each refusal, for a session that passed the guard and changed before its handler read it. */
const REFUSED: Record<SessionRefusal, string> = {
  unknown: 'A valid SDK session token is required',
  expired: 'The session has expired',
  replaced: 'The session was replaced by a newer one',
  closed: 'The session was closed',
  deactivated: 'The session is no longer valid',
};

/** The hosted SDK API (DECISIONS "Hosted SDK API"). Every method starts from the verified token claims. */
@Injectable()
export class SdkService {
  constructor(
    private readonly repository: SdkRepository,
    private readonly contexts: SessionContexts,
    private readonly questionnaires: QuestionnairesService,
    @Inject(SDK_MEDIA_SOURCE) private readonly media: SdkMediaSource,
  ) {}

  /**
   * The session behind a token; 401 when its enrollment has expired or was replaced (the applicant moved to
   * another level since the link was minted), exactly as for a forged token.
   */
  private async load(claims: SdkTokenClaims): Promise<SdkContext> {
    const ctx = await this.contexts.take(claims);
    const why = refusal(ctx);
    if (why) throw unauthorized(REFUSED[why]);
    return ctx!;
  }

  /** Writes are refused once the enrollment is submitted: the checks work on what was there. */
  private assertOpen(ctx: SdkContext): void {
    if (ctx.enrollmentStatus !== 'open') throw verificationSubmitted();
  }

  async session(claims: SdkTokenClaims) {
    const ctx = await this.load(claims);
    const personal = personalFields(ctx);
    const company = companyFields(ctx);
    const byKind = new Map(ctx.steps.map((s) => [s.kind, s]));
    const questionnaire = hasStep(ctx, 'questionnaire')
      ? await this.questionnaires.forEnrollment(
          ctx.applicant.productId,
          ctx.level.attachedQuestionnaireId,
          ctx.enrollmentId,
        )
      : null;
    const p = ctx.presentation;
    return {
      applicantType: ctx.applicant.type,
      levelName: ctx.level.name,
      lang: p.lang ?? null,
      theme: p.theme ?? 'system',
      steps: ctx.level.steps.map((step) => {
        const reviewStatus = byKind.get(step.kind)?.reviewStatus ?? 'pending';
        return {
          kind: step.kind,
          optional: step.optional,
          reviewStatus,
          reviewAnswer: byKind.get(step.kind)?.reviewAnswer ?? null,
          uploads: reviewStatus === 'pending' ? openStepUploads(ctx, step.kind) : [],
        };
      }),
      personalInfo: {
        enabled: personal.enabled,
        required: personal.required,
        values: pick(ctx.applicant.info, personal.enabled),
        locked: ctx.locked.filter((f) => personal.enabled.includes(f)),
      },
      companyData: company && {
        enabled: company.enabled,
        required: company.required,
        values: pick(ctx.applicant.info, company.enabled),
        locked: ctx.locked.filter((f) => company.enabled.includes(f)),
        legalForms: ctx.level.companyLegalForms,
        requiredDocuments: ctx.level.companyRequiredDocuments,
        documentsMinRequired: ctx.level.companyDocumentsMinRequired,
      },
      questionnaire,
      redirects: {
        successUrl: p.successUrl ?? null,
        errorUrl: p.errorUrl ?? null,
        returnUrl: p.returnUrl ?? null,
      },
      // Beyond the DECISIONS shape: where the verification stands, so a reload lands on the right screen.
      enrollmentStatus: ctx.enrollmentStatus,
      review: { reviewAnswer: ctx.applicant.reviewAnswer, reviewRejectType: ctx.applicant.reviewRejectType },
      expiresAtUtc: ctx.expiresAt.toISOString(),
    };
  }

  /**
   * The field lock (contract "Field lock" 1–4): a locked key whose submitted value differs is refused and
   * named in `lockedFields`; an unchanged locked value is accepted silently; keys the level does not enable
   * are dropped whatever their value; the rest are saved. A value of an enabled key that is not a string or
   * null, or cannot be stored under its key, is a 400 (nothing saved).
   */
  async personalInfo(claims: SdkTokenClaims, body: Record<string, unknown>) {
    const ctx = await this.load(claims);
    this.assertOpen(ctx);
    const enabled = new Set([...personalFields(ctx).enabled, ...(companyFields(ctx)?.enabled ?? [])]);
    const locked = new Set(ctx.locked);
    const changes: Record<string, string | null> = {};
    const lockedFields: string[] = [];
    for (const [key, value] of Object.entries(body)) {
      if (!enabled.has(key)) continue;
      const parsed = sdkPersonalInfoValueSchema.safeParse(value);
      if (!parsed.success) throw badRequest(`${key}: ${parsed.error.issues[0].message}`);
      const raw = parsed.data;
      const checked = checkValue(key, raw);
      if (locked.has(key)) {
        const value = 'error' in checked ? raw : checked.value;
        if (!sameAsStored(key, ctx.applicant.info[key], value)) lockedFields.push(key);
        continue;
      }
      if ('error' in checked) throw badRequest(`${key}: ${checked.error}`);
      changes[key] = checked.value;
    }
    const saved = await this.repository.saveInfo(ctx, changes);
    if (saved === 'closed') throw verificationSubmitted();
    for (const key of saved.refused) if (!lockedFields.includes(key)) lockedFields.push(key);
    return { values: pick(saved.info, [...enabled]), lockedFields: lockedFields.sort() };
  }

  async answerQuestionnaire(claims: SdkTokenClaims, answers: Record<string, unknown>) {
    const ctx = await this.load(claims);
    this.assertOpen(ctx);
    if (!hasStep(ctx, 'questionnaire') || !ctx.level.attachedQuestionnaireId) {
      throw conflict('The level has no questionnaire to answer');
    }
    return this.questionnaires.answer(
      {
        productId: ctx.applicant.productId,
        applicantId: ctx.applicant.id,
        enrollmentId: ctx.enrollmentId,
        questionnaireId: ctx.level.attachedQuestionnaireId,
      },
      answers,
    );
  }

  /** What the step still lacks (a level key, question id or upload slot), or undefined when it is complete. */
  private async missingFor(ctx: SdkContext, kind: string): Promise<string | undefined> {
    if (kind === 'personal_information') {
      return missingField(personalFields(ctx).required, ctx.applicant.info);
    }
    if (kind === 'company_data') return missingField(companyFields(ctx)?.required ?? [], ctx.applicant.info);
    if (kind === 'questionnaire') {
      const id = ctx.level.attachedQuestionnaireId;
      if (!id) return undefined;
      return (await this.questionnaires.missing(ctx.applicant.productId, id, ctx.enrollmentId))[0];
    }
    if (isMediaStep(kind)) {
      const resources = await this.media.listForEnrollment(
        ctx.applicant.productId,
        ctx.applicant.id,
        ctx.enrollmentId,
      );
      return missingUpload(kind, ctx.level, resources);
    }
    return undefined;
  }

  private stepList(ctx: SdkContext) {
    return toStepResults(ctx.level, ctx.steps, new Date());
  }

  /** Moves a step of the level to `submitted`; 409 naming what is missing, or when it is past submission. */
  async submitStep(claims: SdkTokenClaims, kind: string) {
    if (!(VERIFICATION_STEP_KINDS as readonly string[]).includes(kind))
      throw notFound(`Unknown step ${kind}`);
    const ctx = await this.load(claims);
    this.assertOpen(ctx);
    if (!hasStep(ctx, kind)) throw notFound(`The level has no ${kind} step`);
    if (!takesUserInput(kind))
      throw conflict(`${kind} takes no input; it is submitted with the verification`);
    const missing = await this.missingFor(ctx, kind);
    if (missing) throw conflict(`${kind} is incomplete: ${missing} is missing`);
    const result = await this.repository.submitStep(ctx, kind);
    if (result === 'closed') throw verificationSubmitted();
    if (!result.ok) throw conflict(`${kind} is already ${result.reviewStatus}`);
    const after = await this.load(claims);
    return { kind, reviewStatus: 'submitted', steps: this.stepList(after) };
  }

  /**
   * Submits the enrollment once every required step that takes user input is in (409 naming the first
   * missing one); the server-run steps are submitted with it. 202 with the step list; a repeat answers the
   * same without recording anything again.
   */
  async submit(claims: SdkTokenClaims) {
    const ctx = await this.load(claims);
    if (ctx.enrollmentStatus === 'open') {
      const byKind = new Map(ctx.steps.map((s) => [s.kind, s.reviewStatus]));
      const missing = ctx.level.steps.find(
        (step) =>
          !step.optional &&
          takesUserInput(step.kind) &&
          !STEP_IN_STATES.includes(byKind.get(step.kind) ?? 'pending'),
      );
      if (missing) throw conflict(`Step ${missing.kind} is not submitted yet`);
      const serverKinds = ctx.level.steps
        .map((s) => s.kind)
        .filter((kind) => (SDK_SERVER_STEP_KINDS as readonly string[]).includes(kind));
      await this.repository.submitEnrollment(ctx, serverKinds);
    }
    const after = await this.load(claims);
    return { enrollmentStatus: after.enrollmentStatus, steps: this.stepList(after) };
  }
}
