import { clientIp, IpAllowList } from './ip-allow-list';
import {
  computeRequestSignature,
  parseRequestTimestamp,
  signRequest,
  timestampWithinDrift,
  verifyRequestSignature,
} from './request-signing';

describe('request signing', () => {
  it('signs timestamp + METHOD + pathWithQuery + raw body as lowercase hex HMAC-SHA256', () => {
    const sig = computeRequestSignature('s3cret', {
      timestamp: '1700000000',
      method: 'post',
      pathWithQuery: '/vaults?x=1',
      body: '{"a":1}',
    });
    // echo -n '1700000000POST/vaults?x=1{"a":1}' | openssl dgst -sha256 -hmac s3cret
    expect(sig).toMatch(/^[0-9a-f]{64}$/);
    expect(
      verifyRequestSignature(
        's3cret',
        {
          timestamp: '1700000000',
          method: 'POST',
          pathWithQuery: '/vaults?x=1',
          body: Buffer.from('{"a":1}'),
        },
        sig,
      ),
    ).toBe(true);
    expect(
      verifyRequestSignature(
        's3cret',
        { timestamp: '1700000000', method: 'POST', pathWithQuery: '/vaults?x=1', body: '{"a": 1}' },
        sig,
      ),
    ).toBe(false);
  });

  it('refuses a signature that is not 64 lowercase hex digits without throwing', () => {
    const request = { timestamp: '1700000000', method: 'GET', pathWithQuery: '/assets' };
    const sig = computeRequestSignature('s3cret', request);
    expect(verifyRequestSignature('s3cret', request, sig)).toBe(true);
    for (const bad of ['', sig.slice(0, 63), `${sig}0`, sig.toUpperCase(), `${sig.slice(0, 63)}g`]) {
      expect(verifyRequestSignature('s3cret', request, bad)).toBe(false);
    }
    const flipped = `${sig.slice(0, 63)}${sig.endsWith('0') ? '1' : '0'}`;
    expect(verifyRequestSignature('s3cret', request, flipped)).toBe(false);
  });

  it('builds the three headers, defaulting to a millisecond timestamp', () => {
    const headers = signRequest('ck_test_x', 's', { method: 'GET', pathWithQuery: '/assets' });
    expect(headers['x-timestamp']).toMatch(/^\d{13}$/);
    expect(headers['x-api-key']).toBe('ck_test_x');
  });

  it('accepts seconds or 13-digit milliseconds and checks drift', () => {
    expect(parseRequestTimestamp('1700000000')).toBe(1700000000000);
    expect(parseRequestTimestamp('1700000000123')).toBe(1700000000123);
    expect(parseRequestTimestamp('17000000001')).toBeUndefined();
    expect(parseRequestTimestamp('abc')).toBeUndefined();
    expect(timestampWithinDrift(1000, 31_000)).toBe(true);
    expect(timestampWithinDrift(1000, 31_001)).toBe(false);
  });
});

describe('IP allow-list', () => {
  it('matches CIDRs, IPv4-mapped addresses, and allows all when empty', () => {
    const list = new IpAllowList(['10.0.0.0/8', '2001:db8::/32', '192.168.1.7']);
    expect(list.allows('10.1.2.3')).toBe(true);
    expect(list.allows('::ffff:10.1.2.3')).toBe(true);
    expect(list.allows('192.168.1.7')).toBe(true);
    expect(list.allows('192.168.1.8')).toBe(false);
    expect(list.allows('2001:db8::1')).toBe(true);
    expect(new IpAllowList([]).allows('1.2.3.4')).toBe(true);
    expect(() => new IpAllowList(['10.0.0.0/33'])).toThrow();
  });

  it('trusts X-Forwarded-For only from configured proxies', () => {
    const proxies = new IpAllowList(['127.0.0.1']);
    expect(clientIp('127.0.0.1', '1.2.3.4', proxies)).toBe('1.2.3.4');
    expect(clientIp('127.0.0.1', '9.9.9.9, 1.2.3.4, 127.0.0.1', proxies)).toBe('1.2.3.4');
    expect(clientIp('5.5.5.5', '1.2.3.4', proxies)).toBe('5.5.5.5');
    expect(clientIp('127.0.0.1', '1.2.3.4', undefined)).toBe('127.0.0.1');
  });
});
