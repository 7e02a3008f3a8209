import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

/** Who an upload belongs to and where it goes: the path and query of every internal upload call. */
export interface UploadOwner {
  productId: string;
  applicantId: string;
  enrollmentId: string;
  slot: string;
}

/** An upload whose bytes are in blob storage under `storageKey`, not yet recorded (decision 0457). */
export interface StagedUpload {
  id: string;
  storageKey: string;
  mime: string;
  sizeBytes: number;
  sha256: string;
  documentType: string | null;
  source: string | null;
  /**
   * The upload has a staged row (decision 0464): every upload staged since decision 0460. Sealed into its ticket,
   * so a commit that finds no row knows the upload expired; false for a ticket of an older media-store, which
   * wrote no row (its commit records the bytes when they exist).
   */
  hasRow: boolean;
}

const stagedSchema = z.object({
  id: z.string().uuid(),
  mime: z.string(),
  sizeBytes: z.number().int().min(1),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  documentType: z.string().nullable(),
  source: z.string().nullable(),
  // Absent from the tickets of a media-store older than decision 0464 (and never sealed as `false`).
  hasRow: z.literal(true).optional(),
});

/** The blob key of an upload: the owner's folders, then the upload's id. */
export const storageKeyFor = (owner: UploadOwner, id: string): string =>
  `${owner.productId}/${owner.enrollmentId}/${owner.slot}/${id}`;

const mac = (secret: string, owner: UploadOwner, payload: string): Buffer =>
  createHmac('sha256', secret)
    .update(`staged-upload\n${owner.productId}\n${owner.applicantId}\n${owner.enrollmentId}\n${owner.slot}\n`)
    .update(payload)
    .digest();

/**
 * The keys of tickets (decision 0460): `seal` signs new ones; `open` lists every key a ticket may be signed with,
 * `seal` first (then the previous key during a rotation).
 */
export interface TicketKeys {
  seal: string;
  open: readonly string[];
}

/** MEDIA_TICKET_SECRET (INTERNAL_SERVICE_TOKEN when unset), and MEDIA_TICKET_SECRET_PREVIOUS when set. */
export function ticketKeysFrom(env: {
  INTERNAL_SERVICE_TOKEN: string;
  MEDIA_TICKET_SECRET?: string;
  MEDIA_TICKET_SECRET_PREVIOUS?: string;
}): TicketKeys {
  const seal = env.MEDIA_TICKET_SECRET ?? env.INTERNAL_SERVICE_TOKEN;
  const previous = env.MEDIA_TICKET_SECRET_PREVIOUS;
  return { seal, open: previous && previous !== seal ? [seal, previous] : [seal] };
}

/**
 * The ticket a staged upload is handed back as: what media-store measured of it, signed for its owner, so the
 * commit (or discard) needs nothing but the staged row to check it is still there. `{base64url JSON}.{base64url HMAC}`.
 */
export function sealTicket(keys: TicketKeys, owner: UploadOwner, staged: StagedUpload): string {
  const { storageKey: _key, hasRow, ...measured } = staged;
  const payload = Buffer.from(JSON.stringify(hasRow ? { ...measured, hasRow } : measured)).toString(
    'base64url',
  );
  return `${payload}.${mac(keys.seal, owner, payload).toString('base64url')}`;
}

/** The staged upload a ticket names, or null when it was not sealed with one of `keys` for this owner. */
export function openTicket(keys: TicketKeys, owner: UploadOwner, ticket: string): StagedUpload | null {
  const [payload, signature, extra] = ticket.split('.');
  if (!payload || !signature || extra !== undefined) return null;
  const given = Buffer.from(signature, 'base64url');
  const signed = keys.open.some((key) => {
    const expected = mac(key, owner, payload);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!signed) return null;
  const parsed = stagedSchema.safeParse(
    (() => {
      try {
        return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      } catch {
        return undefined;
      }
    })(),
  );
  return parsed.success
    ? {
        ...parsed.data,
        hasRow: parsed.data.hasRow === true,
        storageKey: storageKeyFor(owner, parsed.data.id),
      }
    : null;
}
