import { computeRequestSignature, randomSecret } from '@tessera/auth';
import { costRatioWithin } from '@tessera/testing';
import { signatureChecks } from './credential-check';

/**
 * Issue 15, "no oracles": an unknown key and a known key with a wrong signature must be
 * indistinguishable by time. Statistical, on the check alone (no HTTP, no database): the ratio of median
 * costs stays near 1. Before the fix an unknown key skipped the HMAC altogether (ratio about 0.02).
 */
describe('signatureChecks', () => {
  const request = {
    timestamp: '1795290000',
    method: 'POST',
    pathWithQuery: '/vaults',
    body: JSON.stringify({ externalId: 'x'.repeat(200), name: 'n' }),
  };
  const secret = randomSecret();
  const wrong = computeRequestSignature(randomSecret(), request);

  it('accepts the right signature only', () => {
    expect(signatureChecks(secret, request, computeRequestSignature(secret, request))).toBe(true);
    expect(signatureChecks(secret, request, wrong)).toBe(false);
    expect(signatureChecks(undefined, request, wrong)).toBe(false);
  });

  it('an unknown key costs the same as a wrong signature (median per-round cost ratio within 0.67..1.5)', async () => {
    const { ratio } = await costRatioWithin(
      () => signatureChecks(undefined, request, wrong),
      () => signatureChecks(secret, request, wrong),
      // Measured again (three times in all) only while out of bounds: a real leak is out of bounds every time.
      { low: 0.67, high: 1.5, attempts: 3 },
      { batches: 201, perBatch: 50 },
    );
    expect(ratio).toBeGreaterThan(0.67);
    expect(ratio).toBeLessThan(1.5);
  });
});
