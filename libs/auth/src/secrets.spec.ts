import { SecretBox } from './encryption';
import { hashSecret, randomSecret, safeEqual, secretMatchesHash } from './secrets';

const MASTER = Buffer.alloc(32, 3).toString('base64');

describe('secrets', () => {
  it('mints 256-bit secrets that differ each time', () => {
    const a = randomSecret();
    expect(Buffer.from(a, 'base64url')).toHaveLength(32);
    expect(randomSecret()).not.toEqual(a);
  });

  it('compares in constant time and still tells equal from unequal', () => {
    expect(safeEqual('abc', 'abc')).toBe(true);
    expect(safeEqual('abc', 'abd')).toBe(false);
    expect(safeEqual('abc', 'abcd')).toBe(false);
  });

  it('checks a secret against its stored hash: right secret only, same pepper only, malformed hash never', () => {
    const stored = hashSecret('s3cret', 'p1');
    expect(secretMatchesHash('s3cret', 'p1', stored)).toBe(true);
    expect(secretMatchesHash('s3cres', 'p1', stored)).toBe(false);
    expect(secretMatchesHash('s3cret', 'p2', stored)).toBe(false);
    expect(secretMatchesHash('s3cret', 'p1', '0'.repeat(64))).toBe(false);
    expect(secretMatchesHash('s3cret', 'p1', stored.slice(0, 10))).toBe(false);
    expect(secretMatchesHash('s3cret', 'p1', 'not hex')).toBe(false);
  });

  it('hashes with a pepper: same secret, other pepper, other hash', () => {
    expect(hashSecret('s', 'p1')).toEqual(hashSecret('s', 'p1'));
    expect(hashSecret('s', 'p1')).not.toEqual(hashSecret('s', 'p2'));
  });
});

describe('SecretBox', () => {
  it('round-trips and never stores the plaintext', () => {
    const box = new SecretBox(MASTER, 'test');
    const sealed = box.seal('whsec_secret-value');
    expect(sealed).not.toContain('secret-value');
    expect(box.openText(sealed)).toBe('whsec_secret-value');
  });

  it('refuses a tampered ciphertext, another purpose, or other associated data', () => {
    const box = new SecretBox(MASTER, 'a');
    const sealed = box.seal('x', 'row-1');
    const parts = sealed.split('.');
    parts[3] = Buffer.from('y').toString('base64url');
    expect(() => box.open(parts.join('.'), 'row-1')).toThrow();
    expect(() => new SecretBox(MASTER, 'b').open(sealed, 'row-1')).toThrow();
    expect(() => box.open(sealed, 'row-2')).toThrow();
  });

  it('refuses a truncated authentication tag (GCM would accept 4 bytes of it)', () => {
    const box = new SecretBox(MASTER, 'a');
    const sealed = box.seal('x', 'row-1');
    const parts = sealed.split('.');
    const tag = Buffer.from(parts[2]!, 'base64url');
    expect(tag).toHaveLength(16);
    for (const length of [4, 8, 12, 15]) {
      parts[2] = tag.subarray(0, length).toString('base64url');
      expect(() => box.open(parts.join('.'), 'row-1')).toThrow('Not a sealed secret');
    }
    expect(box.openText(sealed, 'row-1')).toBe('x');
  });

  it('rejects a master key that is not 32 bytes', () => {
    expect(() => new SecretBox(Buffer.alloc(16).toString('base64'), 'a')).toThrow(/32 bytes/);
  });
});
