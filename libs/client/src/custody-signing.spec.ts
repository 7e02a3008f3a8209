import { computeRequestSignature, parseRequestTimestamp, verifyRequestSignature } from '@tessera/auth';
import { custodySignature, custodySignedHeaders, monotonicMsClock } from './custody-signing';

describe('custody signing', () => {
  it('computes the same signature as the server verifier in libs/auth', () => {
    const request = {
      timestamp: '1790000000123',
      method: 'post',
      pathWithQuery: '/transactions/transfer?x=1',
      body: '{"amount":"0.5"}',
    };
    const ours = custodySignature(
      's3cret',
      request.timestamp,
      request.method,
      request.pathWithQuery,
      request.body,
    );
    expect(ours).toBe(computeRequestSignature('s3cret', request));
    expect(verifyRequestSignature('s3cret', request, ours)).toBe(true);
    expect(verifyRequestSignature('other', request, ours)).toBe(false);
  });

  it('never repeats a timestamp, even when the wall clock stands still or goes back', () => {
    let wall = 1_790_000_000_000;
    const clock = monotonicMsClock(() => wall);
    const seen = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      if (i === 500) wall -= 10_000;
      seen.add(clock());
    }
    expect(seen.size).toBe(1000);
    for (const t of seen) expect(parseRequestTimestamp(t)).toBe(Number(t));
  });

  it('signs two identical requests with different tuples', () => {
    const clock = monotonicMsClock(() => 1_790_000_000_000);
    const creds = { apiKey: 'ck_test_x', apiSecret: 'secret' };
    const a = custodySignedHeaders(creds, clock(), 'GET', '/vaults', '');
    const b = custodySignedHeaders(creds, clock(), 'GET', '/vaults', '');
    expect(a['x-timestamp']).not.toBe(b['x-timestamp']);
    expect(a['x-signature']).not.toBe(b['x-signature']);
    expect(a['x-api-key']).toBe('ck_test_x');
  });
});
