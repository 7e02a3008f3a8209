/** A time-ordered id (decision 0432): an RFC 9562 version 7 UUID, lowercase, with the variant bits 10. */
export const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
