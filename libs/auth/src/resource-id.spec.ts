import { randomUUID } from 'node:crypto';
import { resourceIdFor, verifyResourceId } from './resource-id';

const key = Buffer.alloc(32, 3);
const owner = { productId: randomUUID(), applicantId: randomUUID() };
const enrollmentId = randomUUID();

describe('resource id', () => {
  it('has the contract format {enrollmentIdHex32}.{slotCode}.{hmac16} and verifies for its owner', () => {
    const id = resourceIdFor({ ...owner, enrollmentId, slotCode: 'f2' }, key);
    expect(id).toMatch(/^[0-9a-f]{32}\.f2\.[0-9a-f]{16}$/);
    expect(id.startsWith(enrollmentId.replace(/-/g, ''))).toBe(true);
    expect(verifyResourceId(id, owner, key)).toEqual({ enrollmentId, slotLetter: 'f', seq: 2 });
  });

  it('refuses another applicant, another product, another key, a changed slot code and garbage', () => {
    const id = resourceIdFor({ ...owner, enrollmentId, slotCode: 's1' }, key);
    expect(verifyResourceId(id, { ...owner, applicantId: randomUUID() }, key)).toBeUndefined();
    expect(verifyResourceId(id, { ...owner, productId: randomUUID() }, key)).toBeUndefined();
    expect(verifyResourceId(id, owner, Buffer.alloc(32, 4))).toBeUndefined();
    expect(verifyResourceId(id.replace('.s1.', '.s2.'), owner, key)).toBeUndefined();
    const flipped = id.slice(0, -1) + (id.endsWith('0') ? '1' : '0');
    expect(verifyResourceId(flipped, owner, key)).toBeUndefined();
    for (const bad of ['', 'x', `${id}.x`, id.toUpperCase(), id.replace('.s1.', '.s0.')]) {
      expect(verifyResourceId(bad, owner, key)).toBeUndefined();
    }
  });
});
