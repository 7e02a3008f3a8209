import { ALPHA2_COUNTRY_CODES } from '@tessera/contracts/src/country-codes';

/**
 * ISO 3166-1 alpha-2 codes: the list the API's country check reads (decision 0483), so the page offers every code
 * it accepts (Kosovo, XK, included). Names come from the browser's Intl.DisplayNames in the page's language.
 */
export const COUNTRY_CODES = ALPHA2_COUNTRY_CODES;

export const COUNTRY_KEYS = new Set(['nationality', 'country', 'registrationCountry']);

/** Countries sorted by their name in `lang`. A stored code outside the list (alpha-3) is kept as is. */
export function countryOptions(lang: string, extra?: string): { code: string; name: string }[] {
  let names: Intl.DisplayNames | undefined;
  try {
    names = new Intl.DisplayNames([lang], { type: 'region' });
  } catch {
    names = undefined;
  }
  const codes = extra && !COUNTRY_CODES.includes(extra) ? [...COUNTRY_CODES, extra] : COUNTRY_CODES;
  return codes
    .map((code) => ({ code, name: (code.length === 2 && names?.of(code)) || code }))
    .sort((a, b) => a.name.localeCompare(b.name, lang));
}
