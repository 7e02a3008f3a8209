import type { FieldSet, Session, StoredUpload } from './api';

/** The stored values of one field set, from the values a save answered (they cover every enabled key). */
const withValues = <T extends FieldSet>(fields: T, values: Record<string, string>): T => ({
  ...fields,
  values: Object.fromEntries(
    fields.enabled.filter((key) => typeof values[key] === 'string').map((key) => [key, values[key]]),
  ),
});

/**
 * The session after a personal-info save: its answer (`values`, the stored values of every enabled key) replaces
 * what the page loaded, so a screen shown again (Back, then forward) starts from what is stored.
 */
export const withSavedValues = (session: Session, values: Record<string, string>): Session => ({
  ...session,
  personalInfo: withValues(session.personalInfo, values),
  companyData: session.companyData && withValues(session.companyData, values),
});

/** The session after a questionnaire save: the stored answers and what is still missing. */
export const withSavedAnswers = (
  session: Session,
  saved: { answers: Record<string, unknown>; missing: string[] },
): Session => ({
  ...session,
  questionnaire: session.questionnaire && { ...session.questionnaire, ...saved },
});

/**
 * What a form sends: only the fields whose value differs from the stored one. A field the user never touched
 * is not sent, so a blank input never clears a value stored meanwhile (another tab); a field the user emptied
 * is sent as null, which clears it.
 */
export function changedFields(
  stored: Record<string, string | undefined>,
  current: Record<string, string | undefined>,
  keys: string[],
): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const key of keys) {
    const now = current[key]?.trim() ?? '';
    if (now !== (stored[key]?.trim() ?? '')) out[key] = now || null;
  }
  return out;
}

/** A step's stored uploads, by the key its screen names them (slot, or document type for company documents). */
export type Uploads = Record<string, StoredUpload>;

/** The key a step screen names a slot's upload by; undefined for one the page has no slot for. */
function pageKey(kind: string, upload: StoredUpload): string | undefined {
  if (kind === 'poa') return 'poa';
  if (upload.slot === 'company_doc') return upload.documentType ?? undefined;
  return upload.slot;
}

/**
 * The uploads the session lists for its open steps, per step kind, as the page keeps them: a reloaded page
 * shows those slots as done instead of asking for them again (each upload counts against the slot's quota).
 */
export function storedUploads(session: Session): Record<string, Uploads> {
  const out: Record<string, Uploads> = {};
  for (const step of session.steps) {
    for (const upload of step.uploads ?? []) {
      const key = pageKey(step.kind, upload);
      if (key) (out[step.kind] ??= {})[key] = upload;
    }
  }
  return out;
}
