/** Decimal strings on the wire, bigint base units inside. Never floats. */

export type AmountProblem = 'format' | 'non-positive' | 'decimals';

export function parseAmount(
  value: string,
  decimals: number,
): { ok: true; units: bigint } | { ok: false; problem: AmountProblem; message: string } {
  if (!/^-?\d+(\.\d+)?$/.test(value)) {
    return { ok: false, problem: 'format', message: 'Must be a decimal string such as "1.25"' };
  }
  if (value.startsWith('-')) {
    return { ok: false, problem: 'non-positive', message: 'Must be greater than zero' };
  }
  const [whole, fraction = ''] = value.split('.');
  const trimmed = fraction.replace(/0+$/, '');
  if (trimmed.length > decimals) {
    return { ok: false, problem: 'decimals', message: `At most ${decimals} decimal places for this asset` };
  }
  const units = BigInt(whole) * 10n ** BigInt(decimals) + BigInt(trimmed.padEnd(decimals, '0') || '0');
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
