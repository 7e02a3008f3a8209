import { parseAmount } from './amounts';

/** Issue 15, "strict money grammar": every lenient form the probe found accepted is refused. */
describe('parseAmount', () => {
  it.each([
    ['0.1', 6, 100_000n],
    ['1', 8, 100_000_000n],
    ['10.25', 2, 1025n],
    ['0.000001', 6, 1n],
    ['123456789012345678.123456789012345678', 18, 123456789012345678123456789012345678n],
  ])('reads %s at %i decimals', (value, decimals, units) => {
    expect(parseAmount(value, decimals)).toEqual({ ok: true, units });
  });

  it.each([
    '  0.1',
    '0.1\n',
    '\t0.1',
    ' 0.1 ',
    '000.1',
    '01',
    '00',
    '+1',
    '1e3',
    '1E-2',
    '.5',
    '5.',
    '0x10',
    '1,5',
    '1 000',
    '١٢',
    '1_000',
    '',
    'NaN',
    'Infinity',
    '0.1.2',
  ])('refuses %j as a format error', (value) => {
    expect(parseAmount(value, 6)).toMatchObject({ ok: false, problem: 'format' });
  });

  it.each(['0', '0.0', '0.000000', '-1', '-0.5', '-0'])('refuses %j as not positive', (value) => {
    expect(parseAmount(value, 6)).toMatchObject({ ok: false, problem: 'non-positive' });
  });

  it('refuses more than 30 digits before the decimal point (numeric(78,0) could not hold it, or its sums)', () => {
    const max = '9'.repeat(30);
    expect(parseAmount(`${max}.${'9'.repeat(18)}`, 18)).toEqual({ ok: true, units: 10n ** 48n - 1n });
    for (const value of [`1${'0'.repeat(30)}`, `1${'0'.repeat(90)}`, `${'9'.repeat(78)}.5`]) {
      expect(parseAmount(value, 18)).toEqual({
        ok: false,
        problem: 'too-large',
        message: 'Too large: at most 30 digits before the decimal point',
      });
    }
  });

  it('refuses more decimals than the asset has, trailing zeros included', () => {
    expect(parseAmount('0.1234567', 6)).toMatchObject({ ok: false, problem: 'decimals' });
    expect(parseAmount('1.0000000', 6)).toMatchObject({ ok: false, problem: 'decimals' });
    expect(parseAmount('1.5', 0)).toMatchObject({ ok: false, problem: 'decimals' });
    expect(parseAmount('1.000000', 6)).toEqual({ ok: true, units: 1_000_000n });
  });
});
