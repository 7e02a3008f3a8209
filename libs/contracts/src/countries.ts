import { getAlpha3Codes } from 'i18n-iso-countries';
import { z } from 'zod';
import { ALPHA2_COUNTRY_CODES } from './country-codes';

/**
 * The assigned ISO 3166-1 alpha-2 and alpha-3 codes (decision 0476). The alpha-2 ones are the list the hosted
 * page offers (`country-codes.ts`, decision 0483); the alpha-3 ones come from i18n-iso-countries.
 */
const COUNTRY_CODES = new Set([...ALPHA2_COUNTRY_CODES, ...Object.keys(getAlpha3Codes())]);

export const COUNTRY_CODE_MESSAGE = 'must be an ISO 3166-1 alpha-2 or alpha-3 country code';

/**
 * Whether `text` is an assigned ISO 3166-1 alpha-2 (`DE`) or alpha-3 (`DEU`) code, in any case. One rule for
 * every place that takes a country (POST /v1/applicants, company-info, personal-info, UBO rows, the hosted SDK).
 */
export function isCountryCode(text: string): boolean {
  return COUNTRY_CODES.has(text.toUpperCase());
}

/**
 * A country or nationality in a request body: an ISO 3166-1 alpha-2 or alpha-3 code, trimmed and stored in
 * upper case as given (`de` -> `DE`, `deu` -> `DEU`; no alpha-3 to alpha-2 mapping). Values stored before this
 * rule stay as they are.
 */
export const countryCodeSchema = z
  .string({ error: 'must be a string' })
  .trim()
  .refine(isCountryCode, COUNTRY_CODE_MESSAGE)
  .transform((code) => code.toUpperCase())
  .meta({
    description:
      'ISO 3166-1 alpha-2 or alpha-3 country code (DE, DEU) in any case; stored and answered upper case',
  });
