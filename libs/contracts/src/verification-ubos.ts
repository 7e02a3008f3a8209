import { countryCodeSchema } from './countries';
import { pastDateSchema } from './dates';
import { presentationParamsSchema, ttlDaysBodySchema } from './verification';
import { z } from 'zod';

/** Roles a UBO row may hold; each is a bucket of company-structure `counts`. */
export const UBO_ROLES = ['ubo', 'director', 'shareholder', 'representative'] as const;

const fullName = z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters');
const dateOfBirth = pastDateSchema;
const ownershipPercent = z.number().min(0, 'must be from 0 to 100').max(100, 'must be from 0 to 100');
const roles = z
  .array(z.enum(UBO_ROLES, { error: `must be one of ${UBO_ROLES.join(', ')}` }))
  .min(1, 'must hold at least one role')
  .transform((list) => [...new Set(list)]);
const email = z.email('must be an email address').max(254);
const nationality = countryCodeSchema;

/** POST .../ubos (DECISIONS): `{fullName, dateOfBirth, ownershipPercent, roles[], email?, nationality?}`. */
export const uboCreateSchema = z.object({
  fullName,
  dateOfBirth,
  ownershipPercent,
  roles,
  email: email.optional(),
  nationality: nationality.optional(),
});
export type UboCreateInput = z.infer<typeof uboCreateSchema>;

/**
 * PATCH .../ubos/{uboIndex}: any editable field. The locked ones (linkedApplicantId, source,
 * verificationLinkUrl, verificationLinkExpiresAtUtc) and unknown names are stripped, i.e. silently ignored.
 * email and nationality take null to clear them.
 */
export const uboPatchSchema = z.object({
  fullName: fullName.optional(),
  dateOfBirth: dateOfBirth.optional(),
  ownershipPercent: ownershipPercent.optional(),
  roles: roles.optional(),
  email: email.nullable().optional(),
  nationality: nationality.nullable().optional(),
});
export type UboPatchInput = z.infer<typeof uboPatchSchema>;

/** PATCH .../company-structure: the negative-declaration flags. */
export const declarationsSchema = z.object({
  hasNoUbos: z.boolean().optional(),
  hasNoShareholders: z.boolean().optional(),
  hasNoDirectors: z.boolean().optional(),
  hasNoRepresentatives: z.boolean().optional(),
});
export type DeclarationsInput = z.infer<typeof declarationsSchema>;

/** spawn-kyc / regenerate-link body beyond the presentation fields (parsed by `parsePresentation`). */
export const linkBodySchema = z.object({
  ttlDays: ttlDaysBodySchema,
  levelName: z.string().min(1).optional(),
});

/**
 * A path's uboIndex: a non-negative integer written as the row's own `uboIndex` (`0`, `12`), else the row does
 * not exist (404). Leading zeros (`00`, `01`) are not another spelling of a row (decision 0476).
 */
export const parseUboIndex = (raw: string): number | undefined =>
  /^(0|[1-9]\d{0,8})$/.test(raw) ? Number(raw) : undefined;

/** The whole spawn-kyc / regenerate-link body as documented: linkBodySchema plus the presentation fields. */
export const linkRequestSchema = linkBodySchema.extend(presentationParamsSchema.shape);
