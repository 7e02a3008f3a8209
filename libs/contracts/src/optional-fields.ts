import type { z } from 'zod';

/**
 * An optional request field that also takes `null` as "absent" (decision 0477): many JSON serialisers write an
 * unset optional property as null, and a null here means nothing else. The parsed value is `undefined` either
 * way; the OpenAPI document shows the field as the type or null.
 */
export const optionalOrNull = <S extends z.ZodType>(schema: S) =>
  schema
    .nullish()
    .transform((value) => value ?? undefined)
    .optional();
