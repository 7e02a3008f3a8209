import { z } from 'zod';

const YYYY_MM_DD = /^\d{4}-\d{2}-\d{2}$/;

/**
 * Whether `text` is a calendar date YYYY-MM-DD that exists: not 2024-02-30 or 2023-02-29, which Date.parse
 * rolls over into the next month (a questionnaire's `date` answer, any date).
 */
export function isCalendarDate(text: string): boolean {
  if (!YYYY_MM_DD.test(text)) return false;
  const date = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(text);
}

/**
 * Whether `text` is a calendar date YYYY-MM-DD that exists (no 1990-02-31, which Date.parse rolls over to
 * March) and is not after today (UTC): a date of birth or of incorporation. One rule for every place that
 * takes one (POST /v1/applicants, company-info, UBO rows, the hosted SDK) and for the identity-data check, so a
 * date the API accepted is never refused by the check later.
 */
export function isPastDate(text: string): boolean {
  return isCalendarDate(text) && Date.parse(`${text}T00:00:00Z`) <= Date.now();
}

export const PAST_DATE_MESSAGE = 'must be a date YYYY-MM-DD, not in the future';

/** A date of birth or incorporation in a request body (the pattern also documents it in OpenAPI). */
export const pastDateSchema = z
  .string()
  .regex(YYYY_MM_DD, PAST_DATE_MESSAGE)
  .refine(isPastDate, PAST_DATE_MESSAGE);
