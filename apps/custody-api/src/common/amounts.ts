/** Decimal strings on the wire, bigint base units inside. Never floats. */

export type AmountProblem = 'format' | 'non-positive' | 'decimals' | 'too-large';

/**
 * Digits an amount may have before its decimal point. Base units are stored as numeric(78,0) and added up in
 * balances: 30 whole digits (at most 10^48 base units at 18 decimals) is far beyond any asset's supply and leaves
 * 10^30 such amounts of room in a balance, so no amount or sum of amounts reaches the column's limit (an
 * overflow there was a 400 without the field, or a step the worker could never commit).
 */
export const MAX_WHOLE_DIGITS = 30;

/**
 * The one grammar of an amount on the wire (docs/decisions/0014): a decimal string, no sign, no exponent,
 * no leading zeros, no surrounding whitespace. `"  0.1"`, `"0.1\n"`, `"000.1"`, `"1e3"`, `".5"` and `"5."`
 * are refused, not read as something else.
 */
export const AMOUNT_GRAMMAR = /^(0|[1-9][0-9]*)(\.[0-9]+)?$/;

export function parseAmount(
  value: string,
  decimals: number,
): { ok: true; units: bigint } | { ok: false; problem: AmountProblem; message: string } {
  if (/^-(0|[1-9][0-9]*)(\.[0-9]+)?$/.test(value)) {
    return { ok: false, problem: 'non-positive', message: 'Must be greater than zero' };
  }
  if (!AMOUNT_GRAMMAR.test(value)) {
    return {
      ok: false,
      problem: 'format',
      message: 'Must be a decimal string such as "1.25" (no sign, spaces or leading zeros)',
    };
  }
  const [whole, fraction = ''] = value.split('.') as [string, string?];
  if (whole.length > MAX_WHOLE_DIGITS) {
    return {
      ok: false,
      problem: 'too-large',
      message: `Too large: at most ${MAX_WHOLE_DIGITS} digits before the decimal point`,
    };
  }
  if (fraction.length > decimals) {
    return { ok: false, problem: 'decimals', message: `At most ${decimals} decimal places for this asset` };
  }
  const units = BigInt(whole) * 10n ** BigInt(decimals) + BigInt(fraction.padEnd(decimals, '0') || '0');
  if (units <= 0n) return { ok: false, problem: 'non-positive', message: 'Must be greater than zero' };
  return { ok: true, units };
}

/** Base units (bigint, or a numeric string from Postgres) to a decimal string without trailing zeros. */
export function formatAmount(units: bigint | string, decimals: number): string {
  let value = BigInt(units);
  const negative = value < 0n;
  if (negative) value = -value;
  const base = 10n ** BigInt(decimals);
  const whole = value / base;
  const fraction = (value % base).toString().padStart(decimals, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}
