import { getAlpha2Codes, getAlpha3Codes } from 'i18n-iso-countries';
import { countryCodeSchema, isCountryCode } from './countries';
import { ALPHA2_COUNTRY_CODES } from './country-codes';

describe('the alpha-2 list the hosted page offers (decision 0483)', () => {
  it('is exactly the alpha-2 codes of i18n-iso-countries, Kosovo included', () => {
    expect([...ALPHA2_COUNTRY_CODES].sort()).toEqual(Object.keys(getAlpha2Codes()).sort());
    expect(ALPHA2_COUNTRY_CODES).toContain('XK');
  });

  it('holds every country the API accepts: each alpha-2 code, and the one each alpha-3 code names', () => {
    const offered = new Set(ALPHA2_COUNTRY_CODES);
    const accepted = [...Object.keys(getAlpha2Codes()), ...Object.values(getAlpha3Codes())];
    expect(accepted.filter((code) => !offered.has(code))).toEqual([]);
    for (const code of ALPHA2_COUNTRY_CODES) expect(isCountryCode(code)).toBe(true);
    expect(countryCodeSchema.parse('xk')).toBe('XK');
  });
});
