import { Inject, Injectable } from '@nestjs/common';
import { SecretBox, signSdkToken, verifySdkToken } from '@tessera/auth';
import type { PresentationParams } from '@tessera/contracts';
import { AppException, APP_CONFIG, badRequest, notFound, unprocessable } from '@tessera/platform';
import { randomBytes } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import type { Env } from '../../config/env';
import { ApplicantsService } from '../applicants/applicants.service';
import type { LevelEntity } from '../levels/entities/level.entity';
import { LevelsService } from '../levels/levels.service';
import type { PartnerContext } from '../products/products.service';
import { refusal } from './session-contexts';
import { SessionsRepository } from './sessions.repository';

const SHORT_CODE = /^[A-Za-z0-9_-]{8,32}$/;

/** A deactivated or blocklisted applicant gets no session link (422) until an operator lifts it. */
export function assertCanVerify(applicant: { status: string; blocklisted: boolean }): void {
  if (applicant.status === 'deactivated') throw unprocessable('Applicant is deactivated');
  if (applicant.blocklisted) throw unprocessable('Applicant is blocklisted');
}

@Injectable()
export class SessionsService {
  private readonly tokenKey: Buffer;
  private readonly baseUrl: string;

  constructor(
    private readonly repository: SessionsRepository,
    private readonly applicants: ApplicantsService,
    private readonly levels: LevelsService,
    @Inject(APP_CONFIG) env: Env,
  ) {
    if (!env.SECRETS_MASTER_KEY) throw new Error('SECRETS_MASTER_KEY is required by verification-api');
    this.tokenKey = SecretBox.pepper(env.SECRETS_MASTER_KEY, 'verification-sdk-token');
    this.baseUrl = env.PUBLIC_BASE_URL.replace(/\/+$/, '');
  }

  /** POST .../verification-sessions: a link for the named level (the applicant moves to it). */
  async forLevel(
    partner: PartnerContext,
    externalUserId: string,
    levelName: string | undefined,
    presentation: PresentationParams,
    ttlDays: number,
  ) {
    if (!levelName) throw badRequest('verificationLevelName is required');
    const applicant = await this.applicants.resolve(partner, externalUserId);
    assertCanVerify(applicant);
    const level = await this.levels.get(partner.productId, levelName);
    if (!level.isActive) throw unprocessable(`Level ${level.name} is inactive`);
    if (level.applicantType !== applicant.type) {
      throw unprocessable(`Level ${level.name} is for ${level.applicantType} applicants`);
    }
    return this.mint(partner, applicant.id, level, presentation, ttlDays);
  }

  /** POST .../verifications: a link for the applicant's current level; 422 when it has no eligible one. */
  async forCurrentLevel(
    partner: PartnerContext,
    externalUserId: string,
    presentation: PresentationParams,
    ttlDays: number,
  ) {
    const applicant = await this.applicants.resolve(partner, externalUserId);
    assertCanVerify(applicant);
    const level = applicant.levelId ? await this.levels.findById(applicant.levelId) : null;
    if (!level) throw unprocessable('Applicant has no verification level');
    if (!level.isActive) throw unprocessable(`Level ${level.name} is inactive`);
    return this.mint(partner, applicant.id, level, presentation, ttlDays);
  }

  private async mint(
    partner: PartnerContext,
    applicantId: string,
    level: LevelEntity,
    presentation: PresentationParams,
    ttlDays: number,
  ) {
    const shortCode = randomBytes(9).toString('base64url');
    const enrollment = await this.repository.open({
      productId: partner.productId,
      applicantId,
      levelId: level.id,
      shortCode,
      presentation,
      ttlDays,
    });
    return {
      url: `${this.baseUrl}/sdk/${shortCode}`,
      shortCode,
      expiresAtUtc: enrollment.expiresAt.toISOString(),
      enrollmentId: enrollment.id,
      levelName: level.name,
    };
  }

  /** The hosted SDK's first call: a short code becomes a signed token valid until the enrollment expires. */
  async resolveShortCode(shortCode: string) {
    const enrollment = SHORT_CODE.test(shortCode)
      ? await this.repository.findByShortCode(shortCode)
      : undefined;
    if (!enrollment) throw notFound('Link not found');
    // The SDK guard's own rule (refusal): a link it would refuse every call of is gone, not a token (0441).
    const refused = refusal({
      ...enrollment,
      enrollmentStatus: enrollment.status,
      enrollmentLevelId: enrollment.levelId,
    });
    if (refused === 'expired') throw new AppException(410, 'Link expired');
    if (refused === 'replaced') throw new AppException(410, 'Link replaced by a newer one');
    if (refused) throw new AppException(410, 'Link closed');
    const token = this.signToken(enrollment);
    return {
      token,
      expiresAtUtc: enrollment.expiresAt.toISOString(),
      enrollmentId: enrollment.id,
      levelName: enrollment.levelName,
      presentation: enrollment.presentation,
    };
  }

  /**
   * A UBO child's link (Spawn result `sdkLink`), minted inside the caller's transaction: the enrollment
   * (steps a RETRY or an expiry closed open again), its short-code URL and the signed token it resolves to.
   */
  async sdkLinkIn(
    manager: EntityManager,
    input: {
      productId: string;
      applicantId: string;
      level: Pick<LevelEntity, 'id'>;
      presentation: PresentationParams;
      ttlDays: number;
    },
  ) {
    const shortCode = randomBytes(9).toString('base64url');
    const enrollment = await this.repository.openIn(manager, {
      productId: input.productId,
      applicantId: input.applicantId,
      levelId: input.level.id,
      shortCode,
      presentation: input.presentation,
      ttlDays: input.ttlDays,
    });
    return {
      url: `${this.baseUrl}/sdk/${shortCode}`,
      shortCode,
      expiresAtUtc: enrollment.expiresAt.toISOString(),
      token: this.signToken({ ...input, id: enrollment.id, expiresAt: enrollment.expiresAt }),
    };
  }

  private signToken(e: { id: string; applicantId: string; productId: string; expiresAt: Date }): string {
    return signSdkToken(
      {
        sub: e.id,
        aid: e.applicantId,
        pid: e.productId,
        iat: Math.floor(Date.now() / 1000),
        exp: Math.floor(e.expiresAt.getTime() / 1000),
      },
      this.tokenKey,
    );
  }

  /** The claims of a validly signed, unexpired token, or undefined. */
  verifyToken(token: string) {
    const check = verifySdkToken(token, this.tokenKey);
    return check.ok ? check.claims : undefined;
  }
}
