import { ZodError } from 'zod';

/** How a number may be written in a query string: decimal digits, with an optional sign and fraction. */
const DECIMAL = /^-?\d+(\.\d+)?$/;

/**
 * Refuses a query number that JavaScript's `Number()` reads but a person would not: `0x10` (16), `1e2` (100),
 * `0b11`, `+5`, ` 5`. `z.coerce.number()` takes all of them; a page size of `0x10` is a malformed request (400),
 * not 16 rows (decision 0473). Plain decimals are left to the schema and its own messages (`0`, `-1`, `1.5`, `201`).
 * Throws the ZodError the exception filters map to 400 (custody: with `errors[field]`; verification: `{message}`
 * as `field: message`); returns the query unchanged.
 */
export function refuseNonDecimalNumbers<T>(
  query: T,
  fields: readonly string[],
  /** The message, when the API words its refusal otherwise (the field is its path either way). */
  message?: string,
): T {
  const values = (query ?? {}) as Record<string, unknown>;
  for (const field of fields) {
    const value = values[field];
    if (typeof value !== 'string' || DECIMAL.test(value) || !Number.isFinite(Number(value)) || value === '')
      continue;
    throw new ZodError([
      {
        code: 'custom',
        path: [field],
        message: message ?? `${field} must be written in decimal digits`,
        input: value,
      },
    ]);
  }
  return query;
}
