/** The SDK API client. The session token lives only in this module's memory: never in a URL or storage. */

import { SDK_ERROR_CODES, type SdkErrorCode } from '@tessera/contracts/src/sdk-error-codes';

export interface Presentation {
  lang?: string;
  theme?: 'light' | 'dark' | 'system';
  returnUrl?: string;
  successUrl?: string;
  errorUrl?: string;
}

export interface FieldSet {
  enabled: string[];
  required: string[];
  values: Record<string, string>;
  locked: string[];
}

export interface Question {
  id: string;
  text: string;
  type: 'text' | 'select' | 'multiselect' | 'boolean' | 'date' | 'number';
  required: boolean;
  options?: string[];
}

export interface Session {
  applicantType: 'individual' | 'company';
  levelName: string;
  lang: string | null;
  theme: 'light' | 'dark' | 'system';
  steps: {
    kind: string;
    optional: boolean;
    reviewStatus: string;
    reviewAnswer: string | null;
    /** The slots of this step (pending, verification open) that already hold an accepted upload. */
    uploads: StoredUpload[];
  }[];
  personalInfo: FieldSet;
  companyData:
    | (FieldSet & { legalForms: string[]; requiredDocuments: string[]; documentsMinRequired: number | null })
    | null;
  questionnaire: {
    questionnaire: { id: string; title: string; questions: Question[] };
    answers: Record<string, unknown>;
    missing: string[];
  } | null;
  redirects: { successUrl: string | null; errorUrl: string | null; returnUrl: string | null };
  enrollmentStatus: string;
  review: { reviewAnswer: string | null; reviewRejectType: string | null };
}

/** An upload a slot holds: one made on this page (`Resource`), or one the session listed after a reload. */
export interface StoredUpload {
  slot: string;
  documentType?: string | null;
  side?: string | null;
  mime: string;
}

/** The answer to an upload. */
export interface Resource extends StoredUpload {
  id: string;
}

/**
 * The SDK API's machine-readable reasons (its `X-Error-Code` header, decision 0458): the page tells refusals
 * apart by these, never by the English message. Bundled from libs/contracts, the list the server sends from
 * (decision 0479), so the two cannot drift.
 */
export { SDK_ERROR_CODES };
export type ApiErrorCode = SdkErrorCode;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The answer's `X-Error-Code`, when it has one. */
    readonly code?: string,
  ) {
    super(message);
  }

  is(code: ApiErrorCode): boolean {
    return this.code === code;
  }
}

let token: string | undefined;

async function call<T>(method: string, path: string, body?: BodyInit, json = true): Promise<T> {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined && json) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(`/api/v1/sdk/${path}`, {
      method,
      headers,
      body,
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch {
    throw new ApiError(0, 'network');
  }
  const text = await res.text();
  const data = text ? (JSON.parse(text) as unknown) : undefined;
  if (!res.ok) {
    const message = (data as { message?: string } | undefined)?.message ?? res.statusText;
    throw new ApiError(res.status, message, res.headers.get('x-error-code') ?? undefined);
  }
  return data as T;
}

/** Trades the link's short code for a session token, kept in memory. */
export async function resolveLink(
  shortCode: string,
): Promise<{ presentation: Presentation; expiresAtUtc: string }> {
  const link = await call<{ token: string; presentation: Presentation; expiresAtUtc: string }>(
    'GET',
    `links/${encodeURIComponent(shortCode)}`,
  );
  token = link.token;
  return { presentation: link.presentation ?? {}, expiresAtUtc: link.expiresAtUtc };
}

export const getSession = () => call<Session>('GET', 'session');

export const savePersonalInfo = (values: Record<string, string | null>) =>
  call<{ values: Record<string, string>; lockedFields: string[] }>(
    'POST',
    'personal-info',
    JSON.stringify(values),
  );

export const saveAnswers = (answers: Record<string, unknown>) =>
  call<{ answers: Record<string, unknown>; missing: string[] }>(
    'POST',
    'questionnaire',
    JSON.stringify({ answers }),
  );

/**
 * Uploads one file into a slot. An upload that expired before it was recorded (503 `upload_expired`, with
 * `Retry-After: 0`: nothing was stored, decision 0469) is sent again at once, once, from the file the page
 * still holds; a second expiry, and any other failure, is the caller's to show.
 */
export async function upload(
  slot: string,
  file: Blob,
  fields: Record<string, string | undefined> = {},
  name = 'upload',
): Promise<Resource> {
  const send = () => {
    const form = new FormData();
    for (const [key, value] of Object.entries(fields)) if (value) form.append(key, value);
    form.append('file', file, file instanceof File ? file.name : name);
    return call<Resource>('POST', `uploads/${slot}`, form, false);
  };
  try {
    return await send();
  } catch (error) {
    if (!(error instanceof ApiError && error.is(SDK_ERROR_CODES.uploadExpired))) throw error;
    return send();
  }
}

export const submitStep = (kind: string) => call<unknown>('POST', `steps/${kind}/submit`, '{}');

export const submitAll = () =>
  call<{ enrollmentStatus: string; steps: { kind: string; reviewStatus: string }[] }>('POST', 'submit', '{}');
