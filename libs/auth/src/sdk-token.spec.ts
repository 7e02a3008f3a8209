import { signSdkToken, verifySdkToken } from './sdk-token';

const key = Buffer.alloc(32, 1);
const claims = { sub: 'enr-1', aid: 'app-1', pid: 'prod-1', iat: 1000, exp: 2000 };

describe('sdk token', () => {
  it('round-trips before expiry', () => {
    const token = signSdkToken(claims, key);
    expect(verifySdkToken(token, key, 1500_000)).toEqual({ ok: true, claims });
  });

  it('refuses an expired token', () => {
    expect(verifySdkToken(signSdkToken(claims, key), key, 2000_000)).toEqual({
      ok: false,
      reason: 'expired',
    });
  });

  it('refuses another key, a tampered body and garbage', () => {
    const token = signSdkToken(claims, key);
    expect(verifySdkToken(token, Buffer.alloc(32, 2), 1500_000).ok).toBe(false);
    const [p, , sig] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ ...claims, pid: 'other' })).toString('base64url');
    expect(verifySdkToken(`${p}.${forged}.${sig}`, key, 1500_000)).toEqual({
      ok: false,
      reason: 'signature',
    });
    expect(verifySdkToken('nope', key)).toEqual({ ok: false, reason: 'malformed' });
  });
});
