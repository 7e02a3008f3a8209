import { Injectable } from '@nestjs/common';
import {
  type ApplicantCreateInput,
  COMPANY_FIELD_TO_LEVEL_KEY,
  COMPANY_REQUEST_FIELDS,
  type CompanyInfoPatchInput,
  INDIVIDUAL_FIELDS,
  type PersonalInfoPatchInput,
} from '@tessera/contracts';
import { badRequest, conflict, forbidden, notFound } from '@tessera/platform';
import type { LevelEntity } from '../levels/entities/level.entity';
import { enabledFields, LevelsService } from '../levels/levels.service';
import type { PartnerContext } from '../products/products.service';
import { type ApplicantRow, ApplicantsRepository, isUnstorableText } from './applicants.repository';
import { toStepResults } from './step-results';

const LEVEL_KEY_TO_COMPANY_FIELD = Object.fromEntries(
  Object.entries(COMPANY_FIELD_TO_LEVEL_KEY).map(([request, key]) => [key, request]),
);
const COUNTRY_KEY = COMPANY_FIELD_TO_LEVEL_KEY.country;

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

/**
 * Request fields -> level keys, keeping only what the level enables (others are dropped silently).
 * Company names are translated (incorporationDate -> incorporatedOn...); individual names are level keys already.
 */
function toLevelKeys(
  input: Record<string, unknown>,
  type: 'individual' | 'company',
  level: LevelEntity | null,
): Record<string, unknown> {
  const enabled = enabledFields(level, type);
  const names: readonly string[] = type === 'company' ? COMPANY_REQUEST_FIELDS : INDIVIDUAL_FIELDS;
  const out: Record<string, unknown> = {};
  for (const name of names) {
    const value = input[name];
    if (value === undefined) continue;
    const key = type === 'company' ? (COMPANY_FIELD_TO_LEVEL_KEY[name] ?? name) : name;
    if (enabled.has(key)) out[key] = value;
  }
  return out;
}

/** Level keys -> request names, for responses. */
function toRequestNames(
  info: Record<string, unknown>,
  type: 'individual' | 'company',
): Record<string, unknown> {
  if (type !== 'company') return { ...info };
  return Object.fromEntries(Object.entries(info).map(([k, v]) => [LEVEL_KEY_TO_COMPANY_FIELD[k] ?? k, v]));
}

export function toApplicantView(a: ApplicantRow) {
  return {
    id: a.id,
    externalUserId: a.externalUserId,
    type: a.type,
    verificationLevelName: a.levelName,
    status: a.status,
    riskLevel: a.riskLevel,
    createdAtUtc: iso(a.createdAt),
    updatedAtUtc: iso(a.updatedAt),
    lockedFields: a.lockedFields,
    info: toRequestNames(a.info, a.type),
  };
}

/** GET .../status (DECISIONS): the applicant's verdict; also what the operator's step review answers. */
export function toApplicantStatus(
  a: Pick<
    ApplicantRow,
    | 'id'
    | 'externalUserId'
    | 'levelName'
    | 'status'
    | 'reviewAnswer'
    | 'reviewRejectType'
    | 'rejectLabels'
    | 'moderationComment'
    | 'riskLevel'
    | 'attempt'
    | 'createdAt'
    | 'reviewedAt'
  >,
) {
  return {
    externalUserId: a.externalUserId,
    applicantId: a.id,
    levelName: a.levelName,
    status: a.status,
    reviewAnswer: a.reviewAnswer,
    reviewRejectType: a.reviewRejectType,
    rejectLabels: a.rejectLabels,
    moderationComment: a.moderationComment,
    riskLevel: a.riskLevel,
    attempt: a.attempt,
    createdAtUtc: iso(a.createdAt),
    reviewedAtUtc: iso(a.reviewedAt),
  };
}

@Injectable()
export class ApplicantsService {
  constructor(
    private readonly repository: ApplicantsRepository,
    private readonly levels: LevelsService,
  ) {}

  /** The caller's applicant: 404 when no product has it, 403 when another product does. */
  async resolve(partner: PartnerContext, externalUserId: string): Promise<ApplicantRow> {
    const applicant = await this.repository.findForProduct(partner.productId, externalUserId);
    if (!applicant) throw notFound('Applicant not found');
    if (applicant.productId !== partner.productId) throw forbidden('Applicant belongs to another product');
    return applicant;
  }

  async create(partner: PartnerContext, input: ApplicantCreateInput) {
    let level: LevelEntity | null;
    try {
      level = await this.levelFor(partner, input);
    } catch (error) {
      // Idempotent on externalUserId (contract): a repeat answers 200 with the existing applicant even when the
      // level it names no longer resolves or is of the other type; only a new applicant needs the level (0474).
      const existing = await this.repository.findForProduct(partner.productId, input.externalUserId);
      if (existing?.productId !== partner.productId) throw error;
      return { created: false, applicant: toApplicantView(existing) };
    }
    const info = toLevelKeys(input, input.type, level);
    const result = await this.repository
      .create({
        productId: partner.productId,
        externalUserId: input.externalUserId,
        type: input.type,
        levelId: level?.id ?? null,
        levelName: level?.name ?? null,
        info,
        sandbox: partner.environment === 'sandbox',
      })
      .catch((error: unknown) => {
        if (isUnstorableText(error)) throw badRequest('Body contains characters that cannot be stored');
        throw error;
      });
    if (!result.created) {
      return {
        created: false,
        applicant: toApplicantView(await this.resolve(partner, input.externalUserId)),
      };
    }
    const createdAtUtc = result.createdAt.toISOString();
    return {
      created: true,
      applicant: {
        id: result.id,
        externalUserId: input.externalUserId,
        type: input.type,
        verificationLevelName: level?.name ?? null,
        status: 'init',
        riskLevel: 'unknown',
        createdAtUtc,
        updatedAtUtc: createdAtUtc,
        lockedFields: Object.keys(info).sort(),
        info: toRequestNames(info, input.type),
      },
    };
  }

  private async levelFor(partner: PartnerContext, input: ApplicantCreateInput): Promise<LevelEntity | null> {
    if (!input.verificationLevelName) return this.levels.findDefault(partner.productId, input.type);
    const level = await this.levels.get(partner.productId, input.verificationLevelName);
    if (level.applicantType !== input.type) {
      throw badRequest(`verificationLevelName: level ${level.name} is for ${level.applicantType} applicants`);
    }
    return level;
  }

  async get(partner: PartnerContext, externalUserId: string) {
    return toApplicantView(await this.resolve(partner, externalUserId));
  }

  private async company(partner: PartnerContext, externalUserId: string): Promise<ApplicantRow> {
    const applicant = await this.resolve(partner, externalUserId);
    if (applicant.type !== 'company') throw badRequest('Applicant is not a company');
    return applicant;
  }

  async companyInfo(partner: PartnerContext, externalUserId: string) {
    return toCompanyInfo(await this.company(partner, externalUserId));
  }

  async patchCompanyInfo(partner: PartnerContext, externalUserId: string, patch: CompanyInfoPatchInput) {
    await this.applyInfoPatch(await this.company(partner, externalUserId), patch);
    return this.companyInfo(partner, externalUserId);
  }

  /**
   * PATCH .../personal-info: an individual's identity fields, as company-info is a company's (decision 0436).
   * Answers the applicant (its info and lockedFields after the change).
   */
  async patchPersonalInfo(partner: PartnerContext, externalUserId: string, patch: PersonalInfoPatchInput) {
    const applicant = await this.resolve(partner, externalUserId);
    if (applicant.type !== 'individual') {
      throw badRequest('Applicant is a company: its identity fields are PATCHed through company-info');
    }
    await this.applyInfoPatch(applicant, patch);
    return this.get(partner, externalUserId);
  }

  /**
   * The identity fields of either PATCH, under level keys and kept to what the level enables: written and
   * claimed (null: cleared and reopened). 409 for a company's country change during a verification in flight.
   */
  private async applyInfoPatch(applicant: ApplicantRow, patch: Record<string, unknown>): Promise<void> {
    const level = applicant.levelId ? await this.levels.findById(applicant.levelId) : null;
    const changes = toLevelKeys(patch, applicant.type, level);
    if (Object.keys(changes).length === 0) return;
    const result = await this.repository.updateInfo(applicant, changes, { countryKey: COUNTRY_KEY });
    if (result === 'gone') throw notFound('Applicant not found');
    if (result === 'in_flight') {
      throw conflict('country cannot change while a verification is in flight; reset the applicant first');
    }
  }

  async companyStructure(partner: PartnerContext, externalUserId: string) {
    const applicant = await this.company(partner, externalUserId);
    const s = await this.repository.structure(applicant.id);
    return {
      externalUserId: applicant.externalUserId,
      hasNoUbos: applicant.hasNoUbos,
      hasNoShareholders: applicant.hasNoShareholders,
      hasNoDirectors: applicant.hasNoDirectors,
      hasNoRepresentatives: applicant.hasNoRepresentatives,
      counts: {
        total: s.total,
        ubos: s.ubos,
        directors: s.directors,
        shareholders: s.shareholders,
        representatives: s.representatives,
        spawned: s.spawned,
        completed: s.completed,
        rejected: s.rejected,
        pending: s.pending,
      },
      // Contract: the parent is closed once every spawned child is terminal. True when no live spawned child is
      // open, also when none was spawned (decision 0476): the same condition under which the company's own
      // verdict is not held for its children (decision 0443). counts.total/spawned tell whether any row exists.
      allChildrenComplete: s.pending === 0,
      lastChildCompletedAtUtc: iso(s.lastChildCompletedAt),
    };
  }

  async status(partner: PartnerContext, externalUserId: string) {
    return toApplicantStatus(await this.resolve(partner, externalUserId));
  }

  /** One entry per required (not optional) step of the applicant's level; `pending` until progress exists. */
  async steps(partner: PartnerContext, externalUserId: string) {
    const a = await this.resolve(partner, externalUserId);
    const level = a.levelId ? await this.levels.findById(a.levelId) : null;
    return {
      externalUserId: a.externalUserId,
      levelId: level?.id ?? null,
      levelName: level?.name ?? null,
      steps: toStepResults(level, await this.repository.steps(a.id), a.createdAt),
    };
  }

  async reviewHistory(
    partner: PartnerContext,
    externalUserId: string,
    filter: { since?: string; limit: number; eventType?: string },
  ) {
    const a = await this.resolve(partner, externalUserId);
    const { items, total } = await this.repository.history(a.id, {
      since: filter.since ? new Date(filter.since) : undefined,
      limit: filter.limit,
      eventType: filter.eventType,
    });
    return {
      items: items.map((e) => ({ atUtc: iso(e.at), eventType: e.eventType, actorType: e.actorType })),
      totalItems: total,
    };
  }
}

function toCompanyInfo(a: ApplicantRow) {
  const text = (key: string) => (typeof a.info[key] === 'string' ? (a.info[key] as string) : null);
  return {
    externalUserId: a.externalUserId,
    companyName: text('companyName'),
    registrationNumber: text('registrationNumber'),
    legalForm: text('legalForm')?.toLowerCase() ?? null,
    incorporationDate: text('incorporatedOn'),
    registeredAddress: text('legalAddress'),
    country: text('registrationCountry'),
    verificationLevelName: a.levelName,
    status: a.status,
    riskLevel: a.riskLevel,
    createdAtUtc: iso(a.createdAt),
    updatedAtUtc: iso(a.updatedAt),
  };
}
