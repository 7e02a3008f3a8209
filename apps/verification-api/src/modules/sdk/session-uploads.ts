import { STEP_MEDIA_SLOTS } from '@tessera/contracts';
import type { StoredUpload } from '../resources/enrollment-uploads';
import type { SdkContext } from '../sessions/session-contexts';

/** An upload the session lists on its step (decision 0447): what the page shows as done. */
export type SessionUpload = Omit<StoredUpload, 'seq'>;

/**
 * The slots of a step still open on this session that already hold an accepted upload: the latest one of
 * each (a typed company document per type), read from the enrollment's own record, never from media-store.
 * None for a step without uploads or once the verification is submitted; the caller asks only for a pending
 * step. Ordered as the step's slots, then by document type.
 */
export function openStepUploads(ctx: SdkContext, kind: string): SessionUpload[] {
  const slots = Object.hasOwn(STEP_MEDIA_SLOTS, kind) ? STEP_MEDIA_SLOTS[kind] : [];
  if (slots.length === 0 || ctx.enrollmentStatus !== 'open') return [];
  return Object.values(ctx.uploads ?? {})
    .filter((upload) => slots.includes(upload.slot))
    .sort(
      (a, b) =>
        slots.indexOf(a.slot) - slots.indexOf(b.slot) ||
        (a.documentType ?? '').localeCompare(b.documentType ?? ''),
    )
    .map(({ seq: _seq, ...upload }) => upload);
}
