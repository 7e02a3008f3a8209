import { isPastDate } from '@tessera/contracts';
import type { CheckResult } from '../reviews/check-results.repository';
import { verdict } from './check-results';

const DATE_KEYS = ['dateOfBirth', 'incorporatedOn'];
const present = (v: unknown) => v !== undefined && v !== null && String(v).trim() !== '';

/** A calendar date YYYY-MM-DD that exists and is not in the future (the API's own rule). */
const validDate = (value: unknown): boolean => typeof value === 'string' && isPastDate(value);

/**
 * personal_information / company_data: every field the level requires has a value, and dates are real
 * past dates. Missing or invalid data is RED RETRY (`REQUIRED_DATA_MISSING` / `INVALID_DATA`): the user can
 * fix it on the next session.
 */
export function identityDataCheck(required: readonly string[], info: Record<string, unknown>): CheckResult {
  const missing = required.filter((key) => !present(info[key]));
  const invalid = DATE_KEYS.filter((key) => present(info[key]) && !validDate(info[key]));
  return verdict({ check: 'identity_data', required, missing, invalid }, [
    ...(missing.length
      ? [{ label: 'REQUIRED_DATA_MISSING', comment: `Missing: ${missing.join(', ')}` }]
      : []),
    ...(invalid.length ? [{ label: 'INVALID_DATA', comment: `Invalid: ${invalid.join(', ')}` }] : []),
  ]);
}
