import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Resource ids of the verification contract: `{enrollmentIdHex32}.{slotCode}.{hmac16}`.
 * `slotCode` is one letter per slot followed by the upload's sequence number in that slot (DECISIONS
 * "Resources"), e.g. `f2`. `hmac16` is the first 16 hex digits of HMAC-SHA256 over the product, the applicant,
 * the enrollment and the slot code, keyed with a server-side pepper (SecretBox.pepper(master, 'resource-id')):
 * an id is bound to its product and applicant and cannot be forged or moved to another applicant.
 */
export interface ResourceIdParts {
  productId: string;
  applicantId: string;
  /** The enrollment's UUID (with or without dashes). */
  enrollmentId: string;
  /** Slot letter plus sequence number, e.g. `f1`. */
  slotCode: string;
}

const ID = /^([0-9a-f]{32})\.([a-z])([1-9][0-9]{0,8})\.([0-9a-f]{16})$/;

const mac = (parts: ResourceIdParts, key: Buffer): Buffer =>
  createHmac('sha256', key)
    .update(
      `resource-id.v1|${parts.productId}|${parts.applicantId}|${hex32(parts.enrollmentId)}|${parts.slotCode}`,
      'utf8',
    )
    .digest()
    .subarray(0, 8);

const hex32 = (uuid: string): string => uuid.replace(/-/g, '').toLowerCase();

export const uuidFromHex32 = (hex: string): string =>
  `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;

export function resourceIdFor(parts: ResourceIdParts, key: Buffer): string {
  return `${hex32(parts.enrollmentId)}.${parts.slotCode}.${mac(parts, key).toString('hex')}`;
}

/**
 * The enrollment, slot letter and sequence number of `id` when its HMAC matches this product and applicant
 * (constant-time compare); undefined for a malformed, forged or foreign id.
 */
export function verifyResourceId(
  id: string,
  owner: { productId: string; applicantId: string },
  key: Buffer,
): { enrollmentId: string; slotLetter: string; seq: number } | undefined {
  const match = ID.exec(id);
  if (!match) return undefined;
  const [, enrollmentHex, slotLetter, seqText, given] = match;
  const expected = mac({ ...owner, enrollmentId: enrollmentHex, slotCode: `${slotLetter}${seqText}` }, key);
  if (!timingSafeEqual(expected, Buffer.from(given, 'hex'))) return undefined;
  return { enrollmentId: uuidFromHex32(enrollmentHex), slotLetter, seq: Number(seqText) };
}
