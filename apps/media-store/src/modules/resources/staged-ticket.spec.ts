import { randomUUID } from 'node:crypto';
import { openTicket, sealTicket, ticketKeysFrom, type UploadOwner } from './staged-ticket';

const TOKEN = 'internal-service-token-0123456789';
const OLD = 'media-ticket-secret-old-0123456789';
const NEW = 'media-ticket-secret-new-0123456789';

const owner: UploadOwner = {
  productId: randomUUID(),
  applicantId: randomUUID(),
  enrollmentId: randomUUID(),
  slot: 'selfie',
};
const staged = {
  id: randomUUID(),
  storageKey: 'ignored',
  mime: 'image/jpeg',
  sizeBytes: 10,
  sha256: 'a'.repeat(64),
  documentType: null,
  source: 'docapture',
  hasRow: true,
};

describe('staged-upload ticket keys (decision 0460)', () => {
  it('unset MEDIA_TICKET_SECRET keys tickets by INTERNAL_SERVICE_TOKEN, as before', () => {
    const keys = ticketKeysFrom({ INTERNAL_SERVICE_TOKEN: TOKEN });
    expect(keys).toEqual({ seal: TOKEN, open: [TOKEN] });
    expect(openTicket(keys, owner, sealTicket(keys, owner, staged))).toMatchObject({ id: staged.id });
  });

  it('a ticket sealed with MEDIA_TICKET_SECRET opens whatever INTERNAL_SERVICE_TOKEN is', () => {
    const before = ticketKeysFrom({ INTERNAL_SERVICE_TOKEN: TOKEN, MEDIA_TICKET_SECRET: NEW });
    const after = ticketKeysFrom({ INTERNAL_SERVICE_TOKEN: `${TOKEN}-rotated`, MEDIA_TICKET_SECRET: NEW });
    expect(openTicket(after, owner, sealTicket(before, owner, staged))).toMatchObject({ id: staged.id });
  });

  it('during a rotation the previous secret opens tickets but never seals one; after it, they are refused', () => {
    const old = ticketKeysFrom({ INTERNAL_SERVICE_TOKEN: TOKEN, MEDIA_TICKET_SECRET: OLD });
    const rotating = ticketKeysFrom({
      INTERNAL_SERVICE_TOKEN: TOKEN,
      MEDIA_TICKET_SECRET: NEW,
      MEDIA_TICKET_SECRET_PREVIOUS: OLD,
    });
    const rotated = ticketKeysFrom({ INTERNAL_SERVICE_TOKEN: TOKEN, MEDIA_TICKET_SECRET: NEW });
    const sealedOld = sealTicket(old, owner, staged);
    const sealedRotating = sealTicket(rotating, owner, staged);
    expect(openTicket(rotating, owner, sealedOld)).toMatchObject({ id: staged.id });
    expect(openTicket(rotated, owner, sealedRotating)).toMatchObject({ id: staged.id });
    expect(openTicket(old, owner, sealedRotating)).toBeNull();
    expect(openTicket(rotated, owner, sealedOld)).toBeNull();
    // Still bound to its owner whichever key opens it.
    expect(openTicket(rotating, { ...owner, slot: 'document_front' }, sealedOld)).toBeNull();
  });
});

describe('staged-upload ticket: the staged row (decision 0464)', () => {
  const keys = ticketKeysFrom({ INTERNAL_SERVICE_TOKEN: TOKEN });
  const payloadOf = (ticket: string): Record<string, unknown> =>
    JSON.parse(Buffer.from(ticket.split('.')[0], 'base64url').toString('utf8')) as Record<string, unknown>;

  it('a ticket says that its upload has a staged row, under its signature', () => {
    const ticket = sealTicket(keys, owner, staged);
    expect(payloadOf(ticket)).toMatchObject({ hasRow: true });
    expect(openTicket(keys, owner, ticket)).toMatchObject({ id: staged.id, hasRow: true });
  });

  it("an older media-store's ticket (no such field) opens as one without a row; the claim cannot be added to it", () => {
    const legacy = sealTicket(keys, owner, { ...staged, hasRow: false });
    expect(payloadOf(legacy)).not.toHaveProperty('hasRow');
    expect(openTicket(keys, owner, legacy)).toMatchObject({ id: staged.id, hasRow: false });
    const [, signature] = legacy.split('.');
    const claimed = Buffer.from(JSON.stringify({ ...payloadOf(legacy), hasRow: true })).toString('base64url');
    expect(openTicket(keys, owner, `${claimed}.${signature}`)).toBeNull();
  });
});
