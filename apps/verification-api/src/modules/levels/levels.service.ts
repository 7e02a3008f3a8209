import { Inject, Injectable } from '@nestjs/common';
import {
  COMPANY_DATA_BASELINE,
  type LevelCreateInput,
  type LevelPatchInput,
  PERSONAL_INFO_BASELINE,
} from '@tessera/contracts';
import {
  APP_CONFIG,
  badRequest,
  CacheInvalidationService,
  conflict,
  notFound,
  type TtlCache,
} from '@tessera/platform';
import type { Env } from '../../config/env';
import type { LevelEntity } from './entities/level.entity';
import { LevelsRepository } from './levels.repository';

export interface LevelSummary {
  name: string;
  applicantType: 'individual' | 'company';
  isActive: boolean;
  isDefault: boolean;
  requiredSteps: string[];
}

export type LevelDetail = Omit<LevelSummary, 'requiredSteps'> & {
  id: string;
  steps: { kind: string; optional: boolean; config: Record<string, unknown> }[];
  attachedQuestionnaireId: string | null;
  personalInfoFields: string[];
  personalInfoRequiredFields: string[];
  companyDataFields: string[];
  companyRequiredFields: string[];
  companyRequiredDocuments: string[];
  companyDocumentsMinRequired: number | null;
  companyLegalForms: string[];
};

export const toLevelSummary = (level: LevelEntity): LevelSummary => ({
  name: level.name,
  applicantType: level.applicantType,
  isActive: level.isActive,
  isDefault: level.isDefault,
  requiredSteps: level.steps.filter((s) => !s.optional).map((s) => s.kind),
});

export const toLevelDetail = (level: LevelEntity): LevelDetail => ({
  id: level.id,
  name: level.name,
  applicantType: level.applicantType,
  isActive: level.isActive,
  isDefault: level.isDefault,
  steps: level.steps.map((s) => ({ kind: s.kind, optional: s.optional, config: s.config ?? {} })),
  attachedQuestionnaireId: level.attachedQuestionnaireId,
  personalInfoFields: level.personalInfoFields,
  personalInfoRequiredFields: level.personalInfoRequiredFields,
  companyDataFields: level.companyDataFields,
  companyRequiredFields: level.companyRequiredFields,
  companyRequiredDocuments: level.companyRequiredDocuments,
  companyDocumentsMinRequired: level.companyDocumentsMinRequired,
  companyLegalForms: level.companyLegalForms,
});

/** The identity fields (level keys) the level enables; an empty list means the SDK baseline. */
export function enabledFields(level: LevelEntity | null, type: 'individual' | 'company'): Set<string> {
  if (type === 'company') {
    const list = level?.companyDataFields ?? [];
    return new Set(list.length > 0 ? list : COMPANY_DATA_BASELINE);
  }
  const list = level?.personalInfoFields ?? [];
  return new Set(list.length > 0 ? list : PERSONAL_INFO_BASELINE);
}

function assertConsistent(
  level: Pick<
    LevelDetail,
    | 'steps'
    | 'personalInfoFields'
    | 'personalInfoRequiredFields'
    | 'companyDataFields'
    | 'companyRequiredFields'
  >,
): void {
  const kinds = level.steps.map((s) => s.kind);
  if (new Set(kinds).size !== kinds.length) throw badRequest('steps: each step kind may appear once');
  const subset = (required: string[], enabled: string[], baseline: string[]) => {
    const pool = new Set(enabled.length > 0 ? enabled : baseline);
    return required.every((f) => pool.has(f));
  };
  if (!subset(level.personalInfoRequiredFields, level.personalInfoFields, PERSONAL_INFO_BASELINE)) {
    throw badRequest('personalInfoRequiredFields: must be a subset of the enabled fields');
  }
  if (!subset(level.companyRequiredFields, level.companyDataFields, COMPANY_DATA_BASELINE)) {
    throw badRequest('companyRequiredFields: must be a subset of the enabled fields');
  }
}

const LEVELS_CACHE = 'levels';

@Injectable()
export class LevelsService {
  /** product:<id>:name:<name> | product:<id>:default:<type> | id:<id> -> level (null = none). */
  private readonly cache: TtlCache<LevelEntity | null>;

  constructor(
    private readonly repository: LevelsRepository,
    private readonly caches: CacheInvalidationService,
    @Inject(APP_CONFIG) env: Env,
  ) {
    this.cache = caches.cache(LEVELS_CACHE, env.ROW_CACHE_TTL_MS);
  }

  private async cached(key: string, load: () => Promise<LevelEntity | null>): Promise<LevelEntity | null> {
    const hit = this.cache.get(key);
    if (hit !== undefined) return hit;
    const version = this.cache.version;
    const level = await load();
    this.cache.set(key, level, version);
    return level;
  }

  /** Drops the product's level entries on every replica (a create or edit changes names and defaults). */
  private invalidate(productId: string, levelId?: string): Promise<void> {
    return this.caches.invalidate(LEVELS_CACHE, {
      prefixes: [`product:${productId}:`],
      keys: levelId ? [`id:${levelId}`] : [],
    });
  }

  async list(productId: string, type: 'individual' | 'company' | 'all', includeInactive: boolean) {
    const levels = await this.repository.list(productId, type, includeInactive);
    return { items: levels.map(toLevelSummary), totalItems: levels.length };
  }

  /** A level of the product; 404 whether it does not exist or belongs to another product. */
  async get(productId: string, name: string): Promise<LevelEntity> {
    const level = await this.cached(`product:${productId}:name:${name}`, () =>
      this.repository.findByName(productId, name),
    );
    if (!level) throw notFound('Level not found');
    return level;
  }

  findById(id: string) {
    return this.cached(`id:${id}`, () => this.repository.findById(id));
  }

  findDefault(productId: string, type: 'individual' | 'company') {
    return this.cached(`product:${productId}:default:${type}`, () =>
      this.repository.findDefault(productId, type),
    );
  }

  async create(productId: string, input: LevelCreateInput): Promise<LevelDetail> {
    assertConsistent(input);
    const level = await this.repository.create(productId, input);
    await this.invalidate(productId);
    if (level === 'duplicate') throw conflict(`Level ${input.name} already exists`);
    return toLevelDetail(level);
  }

  async update(productId: string, name: string, patch: LevelPatchInput): Promise<LevelDetail> {
    const level = await this.get(productId, name);
    assertConsistent({ ...toLevelDetail(level), ...patch } as LevelDetail);
    const updated = await this.repository.update(level, patch);
    await this.invalidate(productId, level.id);
    if (updated === 'referenced') throw conflict('Level is referenced by an applicant and cannot be renamed');
    if (updated === 'duplicate') throw conflict(`Level ${patch.name} already exists`);
    return toLevelDetail(updated);
  }
}
