import { ZodError } from 'zod';
import { refuseNonDecimalNumbers } from './query-numbers';

describe('refuseNonDecimalNumbers', () => {
  it('refuses what Number() reads but is not decimal digits', () => {
    for (const take of ['0x10', '1e2', '0b11', '0o7', '+5', ' 5', '5 ', '.5']) {
      expect(() => refuseNonDecimalNumbers({ take }, ['take'])).toThrow(ZodError);
    }
    try {
      refuseNonDecimalNumbers({ take: '0x10' }, ['take']);
    } catch (err) {
      expect((err as ZodError).issues[0]).toMatchObject({
        path: ['take'],
        message: 'take must be written in decimal digits',
      });
    }
  });

  it('leaves plain decimals, other text, arrays and absent fields to the schema', () => {
    for (const take of ['20', '020', '0', '-1', '1.5', '201', 'abc', '', undefined, ['1', '2']]) {
      expect(refuseNonDecimalNumbers({ take }, ['take'])).toEqual({ take });
    }
    expect(refuseNonDecimalNumbers(undefined, ['take'])).toBeUndefined();
  });
});
