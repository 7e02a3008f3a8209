import { countryCodeSchema } from './countries';
import { pastDateSchema } from './dates';
import { emailAddress, presentationParamsSchema, ttlDaysBodySchema } from './verification';
import { z } from 'zod';

/** Roles a UBO row may hold; each is a bucket of company-structure `counts`. */
export const UBO_ROLES = ['ubo', 'director', 'shareholder', 'representative'] as const;

const fullName = z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters');
const dateOfBirth = pastDateSchema;
/**
 * A share as the row's `numeric(5,2)` column keeps it: from 0 (a director or representative who holds none) to
 * 100, with at most 2 decimal places. A finer value (`33.333`, `1e-9`) is refused, never rounded (decision 0483).
 * The check is on the double JSON gave: `x` has at most 2 decimals when it is the double nearest to its own
 * 2-decimal rounding, so `0.1`, `33.33` and `12.5` pass and `0.125` does not.
 */
export const OWNERSHIP_DECIMALS = 2;
const OWNERSHIP_RANGE = 'must be from 0 to 100';
const ownershipPercent = z
  .number()
  .min(0, OWNERSHIP_RANGE)
  .max(100, OWNERSHIP_RANGE)
  .refine((x) => Number(x.toFixed(OWNERSHIP_DECIMALS)) === x, {
    error: `must have at most ${OWNERSHIP_DECIMALS} decimal places`,
  })
  .meta({
    description:
      'Percent from 0 to 100 with at most 2 decimal places; a finer value is refused, never rounded',
    multipleOf: 0.01,
  });
const roles = z
  .array(z.enum(UBO_ROLES, { error: `must be one of ${UBO_ROLES.join(', ')}` }))
  .min(1, 'must hold at least one role')
  .transform((list) => [...new Set(list)]);
// No message of its own: the house wording says `must be a string` or `must be an email address` (0483).
const email = emailAddress;
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
 * PATCH .../ubos/{uboIndex}: any editable field. email and nationality take null to clear them. Any other name
 * is refused (400 `Unrecognized key: "…"`), as on company-info and company-structure: a misspelt `fulName` is
 * never taken as an edit (decision 0486). The fields a row reads back with and cannot be edited
 * (`UBO_READ_ONLY_FIELDS`) are silently ignored, as the contract says of the locked ones: pass the body through
 * `withoutReadOnlyUboFields` first.
 */
export const uboPatchSchema = z
  .object({
    fullName: fullName.optional(),
    dateOfBirth: dateOfBirth.optional(),
    ownershipPercent: ownershipPercent.optional(),
    roles: roles.optional(),
    email: email.nullable().optional(),
    nationality: nationality.nullable().optional(),
  })
  .strict();
export type UboPatchInput = z.infer<typeof uboPatchSchema>;

/**
 * The row's fields a PATCH ignores: the contract's locked four, and the rest of what GET .../ubos/{uboIndex}
 * returns, so that a row read, changed and sent back whole is an edit, not a 400.
 */
export const UBO_READ_ONLY_FIELDS = [
  'linkedApplicantId',
  'source',
  'verificationLinkUrl',
  'verificationLinkExpiresAtUtc',
  'uboIndex',
  'identityChangedAfterSpawn',
  'removed',
  'createdAtUtc',
  'updatedAtUtc',
] as const;

/** The PATCH body without the fields it silently ignores (`UBO_READ_ONLY_FIELDS`). */
export function withoutReadOnlyUboFields(body: Record<string, unknown>): Record<string, unknown> {
  const kept = { ...body };
  for (const field of UBO_READ_ONLY_FIELDS) delete kept[field];
  return kept;
}

/**
 * PATCH .../company-structure: the negative-declaration flags. An unknown name is refused (400 `Unrecognized key:
 * "…"`), as on PATCH .../company-info, rather than ignored: a misspelt flag is never taken as a change (0483).
 */
export const declarationsSchema = z
  .object({
    hasNoUbos: z.boolean().optional(),
    hasNoShareholders: z.boolean().optional(),
    hasNoDirectors: z.boolean().optional(),
    hasNoRepresentatives: z.boolean().optional(),
  })
  .strict();
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
