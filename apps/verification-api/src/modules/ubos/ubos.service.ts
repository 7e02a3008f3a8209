import { Inject, Injectable } from '@nestjs/common';
import type { PresentationParams } from '@tessera/contracts';
import { APP_CONFIG, badRequest, conflict, notFound, unprocessable } from '@tessera/platform';
import type { EntityManager } from 'typeorm';
import type { Env } from '../../config/env';
import type { ApplicantRow } from '../applicants/applicants.repository';
import { ApplicantsService } from '../applicants/applicants.service';
import { RateLimitService } from '../auth/rate-limit.service';
import type { LevelEntity } from '../levels/entities/level.entity';
import { enabledFields, LevelsService } from '../levels/levels.service';
import type { PartnerContext } from '../products/products.service';
import { ReviewCompletionRepository } from '../reviews/review-completion.repository';
import { assertCanVerify, SessionsService } from '../sessions/sessions.service';
import type { DeclarationsInput, UboCreateInput, UboPatchInput } from '@tessera/contracts';
import { refusedRow } from './row-rules';
import { type SpawnedChild, type UboRow, UbosRepository } from './ubos.repository';

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

/**
 * `fullName` as the child's name claims: the last word is lastName; the words before it are firstName, or
 * firstName and middleName when the level collects a middle name.
 */
export function splitFullName(fullName: string, withMiddleName: boolean): Record<string, string> {
  const words = fullName.trim().split(/\s+/);
  if (words.length === 1) return { firstName: words[0] };
  const last = words[words.length - 1];
  if (!withMiddleName || words.length === 2)
    return { firstName: words.slice(0, -1).join(' '), lastName: last };
  return { firstName: words[0], middleName: words.slice(1, -1).join(' '), lastName: last };
}

export interface LinkOptions {
  ttlDays: number;
  levelName?: string;
  presentation: PresentationParams;
}

/** UBO rows of a company, the children spawned from them and their links (decision 0140). */
@Injectable()
export class UbosService {
  private readonly baseUrl: string;

  constructor(
    private readonly repository: UbosRepository,
    private readonly applicants: ApplicantsService,
    private readonly levels: LevelsService,
    private readonly sessions: SessionsService,
    private readonly limits: RateLimitService,
    private readonly reviewCompletion: ReviewCompletionRepository,
    @Inject(APP_CONFIG) env: Env,
  ) {
    this.baseUrl = env.PUBLIC_BASE_URL.replace(/\/+$/, '');
  }

  /** The UBO row shape of the contract plus its index, removal mark and timestamps. */
  toView(row: UboRow) {
    return {
      uboIndex: row.uboIndex,
      fullName: row.fullName,
      dateOfBirth: row.dateOfBirth,
      ownershipPercent: row.ownershipPercent === null ? null : Number(row.ownershipPercent),
      roles: row.roles,
      email: row.email,
      nationality: row.nationality,
      linkedApplicantId: row.linkedApplicantId,
      source: row.source,
      verificationLinkUrl: row.linkShortCode ? `${this.baseUrl}/sdk/${row.linkShortCode}` : null,
      verificationLinkExpiresAtUtc: iso(row.linkExpiresAt),
      identityChangedAfterSpawn: row.identityChangedAfterSpawn,
      removed: row.removed,
      createdAtUtc: iso(row.createdAt),
      updatedAtUtc: iso(row.updatedAt),
    };
  }

  private async company(partner: PartnerContext, externalUserId: string): Promise<ApplicantRow> {
    const applicant = await this.applicants.resolve(partner, externalUserId);
    if (applicant.type !== 'company') throw badRequest('Applicant is not a company');
    return applicant;
  }

  async append(partner: PartnerContext, externalUserId: string, input: UboCreateInput) {
    const parent = await this.company(partner, externalUserId);
    const row = await this.repository.append(parent.id, input);
    if ('outcome' in row) throw refusedRow(row);
    return this.toView(row);
  }

  async list(partner: PartnerContext, externalUserId: string) {
    const parent = await this.company(partner, externalUserId);
    const rows = await this.repository.list(parent.id);
    return { items: rows.map((row) => this.toView(row)), totalItems: rows.length };
  }

  async get(partner: PartnerContext, externalUserId: string, uboIndex: number | undefined) {
    const parent = await this.company(partner, externalUserId);
    const row = uboIndex === undefined ? undefined : await this.repository.find(parent.id, uboIndex);
    if (!row) throw notFound('UBO row not found');
    return this.toView(row);
  }

  async patch(
    partner: PartnerContext,
    externalUserId: string,
    uboIndex: number | undefined,
    changes: UboPatchInput,
  ) {
    const parent = await this.company(partner, externalUserId);
    if (uboIndex === undefined) throw notFound('UBO row not found');
    const result = await this.repository.patch(parent.id, uboIndex, changes);
    if (result.outcome === 'not_found') throw notFound('UBO row not found');
    if (result.outcome === 'removed') throw conflict('UBO row is removed');
    if (result.outcome !== 'updated') throw refusedRow(result);
    return this.toView(result.row);
  }

  async remove(partner: PartnerContext, externalUserId: string, uboIndex: number | undefined) {
    const parent = await this.company(partner, externalUserId);
    const row =
      uboIndex === undefined
        ? undefined
        : await this.repository.remove(parent.id, uboIndex, (manager) =>
            this.reviewCompletion.rollUpCompany(manager, parent.id),
          );
    if (!row) throw notFound('UBO row not found');
    return this.toView(row);
  }

  async setDeclarations(partner: PartnerContext, externalUserId: string, flags: DeclarationsInput) {
    const parent = await this.company(partner, externalUserId);
    await this.repository.setDeclarations(parent.id, flags);
    return this.applicants.companyStructure(partner, externalUserId);
  }

  /**
   * spawn-kyc: 201 with the Spawn result when it created the child, 200 with `alreadyLinked: true` (same
   * child, fresh link) on a repeat. Counted against the credential's hourly cap first.
   */
  async spawn(
    partner: PartnerContext,
    externalUserId: string,
    uboIndex: number | undefined,
    options: LinkOptions,
  ) {
    await this.limits.spawnKyc(partner.apiKey);
    const parent = await this.company(partner, externalUserId);
    if (uboIndex === undefined) throw notFound('UBO row not found');
    const existing = await this.repository.find(parent.id, uboIndex);
    if (!existing) throw notFound('UBO row not found');
    if (existing.removed) throw conflict('UBO row is removed');
    const level = existing.linkedApplicantId ? null : await this.childLevel(partner, options.levelName);
    const childExternalUserId = `${parent.externalUserId}-ubo-${uboIndex}`;
    const result = await this.repository.spawn(
      {
        productId: partner.productId,
        parentId: parent.id,
        uboIndex,
        childExternalUserId,
        // The child belongs to its parent's environment, whichever key spawns it: a sandbox key must not be able
        // to mint a sandbox child of a real company and approve it with a sandbox review (decision 0434).
        sandbox: parent.sandbox,
        // A concurrent spawn may have linked the row since `existing` was read: the repository then ignores these.
        level: level ?? { id: '', name: '' },
        info: level ? this.childClaims(existing, level) : {},
      },
      (manager, child) => this.mint(manager, partner, child, options),
    );
    if (result.outcome === 'not_found') throw notFound('UBO row not found');
    if (result.outcome === 'removed') throw conflict('UBO row is removed');
    if (result.outcome === 'external_user_id_taken') {
      throw conflict(`An applicant with externalUserId ${childExternalUserId} already exists`);
    }
    return {
      created: result.outcome === 'spawned',
      body: {
        uboIndex,
        childApplicantId: result.child.id,
        childExternalUserId: result.child.externalUserId,
        alreadyLinked: result.outcome === 'already_linked',
        sdkLink: result.link,
      },
    };
  }

  /** regenerate-link: 200 `{uboIndex, childApplicantId, sdkLink}`; 409 before spawn; 5 per row per day. */
  async regenerate(
    partner: PartnerContext,
    externalUserId: string,
    uboIndex: number | undefined,
    options: LinkOptions,
  ) {
    const parent = await this.company(partner, externalUserId);
    if (uboIndex === undefined) throw notFound('UBO row not found');
    const existing = await this.repository.find(parent.id, uboIndex);
    if (!existing) throw notFound('UBO row not found');
    if (existing.removed) throw conflict('UBO row is removed');
    if (!existing.linkedApplicantId)
      throw conflict('UBO row has no child applicant yet; call spawn-kyc first');
    await this.limits.regenerateLink(existing.id);
    const result = await this.repository.regenerate(parent.id, uboIndex, (manager, child) =>
      this.mint(manager, partner, child, options),
    );
    if (result.outcome === 'not_found') throw notFound('UBO row not found');
    if (result.outcome === 'removed') throw conflict('UBO row is removed');
    if (result.outcome === 'no_child') throw conflict('UBO row has no child applicant yet');
    return { uboIndex, childApplicantId: result.child.id, sdkLink: result.link };
  }

  /** `levelName` of the body (an active individual level), else the product's default individual level. */
  private async childLevel(partner: PartnerContext, levelName: string | undefined): Promise<LevelEntity> {
    const level = levelName
      ? await this.levels.get(partner.productId, levelName)
      : await this.levels.findDefault(partner.productId, 'individual');
    if (!level) throw unprocessable('The product has no default individual level; pass levelName');
    if (level.applicantType !== 'individual') {
      throw unprocessable(`Level ${level.name} is for ${level.applicantType} applicants`);
    }
    if (!level.isActive) throw unprocessable(`Level ${level.name} is inactive`);
    return level;
  }

  /** The row's identity as the child's partner claims, under the level keys the level enables. */
  private childClaims(row: UboRow, level: LevelEntity): Record<string, unknown> {
    const enabled = enabledFields(level, 'individual');
    const candidates: Record<string, unknown> = {
      ...splitFullName(row.fullName, enabled.has('middleName')),
      dateOfBirth: row.dateOfBirth ?? undefined,
      nationality: row.nationality ?? undefined,
      email: row.email ?? undefined,
    };
    return Object.fromEntries(
      Object.entries(candidates).filter(([key, value]) => value !== undefined && enabled.has(key)),
    );
  }

  private async mint(
    manager: EntityManager,
    partner: PartnerContext,
    child: SpawnedChild,
    options: LinkOptions,
  ) {
    assertCanVerify(child);
    if (!child.levelId) throw unprocessable('Child applicant has no verification level');
    return this.sessions.sdkLinkIn(manager, {
      productId: partner.productId,
      applicantId: child.id,
      level: { id: child.levelId },
      presentation: options.presentation,
      ttlDays: options.ttlDays,
    });
  }
}
