import { z } from 'zod';

/** The six upload slots of the verification contract ("Resource metadata"). */
export const MEDIA_SLOTS = [
  'document_front',
  'document_back',
  'selfie',
  'liveness_video',
  'company_doc',
  'additional',
] as const;
export type MediaSlot = (typeof MEDIA_SLOTS)[number];

/** DECISIONS "Resources": one letter per slot, followed in a resource id by the upload's sequence number. */
export const SLOT_CODES: Record<MediaSlot, string> = {
  document_front: 'f',
  document_back: 'b',
  selfie: 's',
  liveness_video: 'l',
  company_doc: 'c',
  additional: 'a',
};
export const slotForCode = (code: string): MediaSlot | undefined =>
  MEDIA_SLOTS.find((slot) => SLOT_CODES[slot] === code);

export const MEDIA_KINDS = ['image', 'video', 'pdf'] as const;
export type MediaKind = (typeof MEDIA_KINDS)[number];

/** Sniffed MIME types media-store accepts, and the kind each belongs to. */
export const MEDIA_MIME_KINDS: Record<string, MediaKind> = {
  'image/jpeg': 'image',
  'image/png': 'image',
  'image/heic': 'image',
  // HEIC photos whose major brand is the generic `mif1` (many Android cameras) sniff as image/heif.
  'image/heif': 'image',
  'image/webp': 'image',
  'application/pdf': 'pdf',
  'video/webm': 'video',
  'video/mp4': 'video',
};

const IMAGE_MIMES = ['image/jpeg', 'image/png', 'image/heic', 'image/heif', 'image/webp'];

/** DECISIONS "Hosted SDK API": what the magic bytes of an upload may be, per slot. */
export const SLOT_ALLOWED_MIMES: Record<MediaSlot, readonly string[]> = {
  document_front: IMAGE_MIMES,
  document_back: IMAGE_MIMES,
  selfie: IMAGE_MIMES,
  liveness_video: ['video/webm', 'video/mp4'],
  company_doc: [...IMAGE_MIMES, 'application/pdf'],
  additional: [...IMAGE_MIMES, 'application/pdf'],
};

/** Where an upload comes from (contract "Resource metadata": the observed values). */
export const MEDIA_SOURCES = ['docapture', 'liveness'] as const;
export type MediaSource = (typeof MEDIA_SOURCES)[number];

/** Default `source` of an upload when the client names none. */
export const defaultSourceFor = (slot: MediaSlot): MediaSource =>
  slot === 'liveness_video' ? 'liveness' : 'docapture';

/** The side of a document image, which its slot says; the other slots have none. */
export const sideForSlot = (slot: MediaSlot): 'front' | 'back' | null =>
  slot === 'document_front' ? 'front' : slot === 'document_back' ? 'back' : null;

/** Optional labels of an upload (SDK multipart text fields, media-store PUT query). */
export const uploadLabelsSchema = z.object({
  documentType: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and - only (at most 64)')
    .optional(),
  side: z.enum(['front', 'back'], { message: 'must be front or back' }).optional(),
  source: z.enum(MEDIA_SOURCES, { message: `must be ${MEDIA_SOURCES.join(' or ')}` }).optional(),
});
export type UploadLabels = z.infer<typeof uploadLabelsSchema>;

/** Why `side` cannot label an upload to `slot` (it is the slot's to say), or undefined when it can. */
export const sideRefusal = (slot: MediaSlot, side: string | undefined): string | undefined => {
  const own = sideForSlot(slot);
  if (side === undefined || side === own) return undefined;
  return own ? `must be ${own} for ${slot}` : `${slot} has no side`;
};

/** The labels of an upload to `slot`: `side`, when sent, must be the slot's own. */
export const uploadLabelsFor = (slot: MediaSlot) =>
  uploadLabelsSchema.superRefine(({ side }, ctx) => {
    const message = sideRefusal(slot, side);
    if (message) ctx.addIssue({ code: 'custom', path: ['side'], message });
  });

/** One stored upload as media-store reports it (internal: no resource id, verification-api mints those). */
export const mediaResourceSchema = z.object({
  enrollmentId: z.string().uuid(),
  applicantId: z.string().uuid(),
  slot: z.enum(MEDIA_SLOTS),
  /** 1, 2, … per (enrollment, slot): historical uploads keep their own number. */
  seq: z.number().int().min(1),
  kind: z.enum(MEDIA_KINDS),
  mime: z.string(),
  sizeBytes: z.number().int().min(0),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  documentType: z.string().nullable(),
  side: z.string().nullable(),
  source: z.string().nullable(),
  active: z.boolean(),
  addedAtUtc: z.string(),
  supersededAtUtc: z.string().nullable(),
});
export type MediaResource = z.infer<typeof mediaResourceSchema>;

/** RPC `media.resources.list.v1`: uploads of one applicant of one product, newest first. */
export const mediaListRequestSchema = z.object({
  productId: z.string().uuid(),
  applicantId: z.string().uuid(),
  enrollmentId: z.string().uuid().optional(),
  kind: z.enum(MEDIA_KINDS).optional(),
  /** `active`: current uploads only; `inactive`: superseded ones only; `all`: both. */
  activity: z.enum(['active', 'inactive', 'all']).default('all'),
});
export type MediaListRequest = z.input<typeof mediaListRequestSchema>;
export const mediaListReplySchema = z.object({ items: z.array(mediaResourceSchema) });
export type MediaListReply = z.infer<typeof mediaListReplySchema>;

export const MEDIA_RPC = {
  LIST: 'media.resources.list.v1',
} as const;

const booleanParam = z
  .enum(['true', 'false'], { message: 'must be true or false' })
  .transform((v) => v === 'true');

/** GET /v1/applicants/{externalUserId}/resources query (contract "Resources"). */
export const resourceListQuerySchema = z.object({
  enrollmentId: z.string().uuid({ message: 'must be a GUID' }).optional(),
  kind: z
    .enum(['image', 'video', 'pdf', 'all'], { message: 'must be image, video, pdf or all' })
    .default('all'),
  activeOnly: booleanParam.default(true),
});
export type ResourceListQuery = z.infer<typeof resourceListQuerySchema>;

/** Resource metadata of the verification contract (item of GET .../resources). */
export const resourceMetadataSchema = z.object({
  id: z.string(),
  enrollmentId: z.string().uuid(),
  kind: z.enum(MEDIA_KINDS),
  slot: z.enum(MEDIA_SLOTS),
  documentType: z.string().nullable(),
  side: z.string().nullable(),
  mime: z.string(),
  addedAtUtc: z.string(),
  source: z.string().nullable(),
  active: z.boolean(),
});
export type PartnerResourceMetadata = z.infer<typeof resourceMetadataSchema>;
