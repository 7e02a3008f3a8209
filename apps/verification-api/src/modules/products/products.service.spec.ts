import { hashSecret, SecretBox } from '@tessera/auth';
import { TtlCache } from '@tessera/platform';
import { costRatioWithin } from '@tessera/testing';
import type { ApiKeyRow, ProductsRepository } from './products.repository';
import { ProductsService } from './products.service';

/**
 * Issue 15, "no oracles": authenticating an unknown key and a known key with a wrong secret must cost the
 * same. The service runs on its own with an in-memory key table whose lookup takes a database-like 1 ms;
 * before the fix an unknown key paid that lookup on every request and a known key did not (ratio ≫ 1).
 */
describe('ProductsService.authenticate timing', () => {
  const masterKey = Buffer.alloc(32, 9).toString('base64');
  const pepper = SecretBox.pepper(masterKey, 'verification-api-secret');
  const row = {
    apiKey: 'vk_live_000000000000000000000001',
    productId: '00000000-0000-0000-0000-000000000001',
    environment: 'production',
    secretHash: hashSecret('the-right-secret', pepper),
    active: true,
  } as ApiKeyRow;
  let lookups = 0;
  const repository = {
    findKey: async (apiKey: string) => {
      lookups++;
      await new Promise((r) => setTimeout(r, 1));
      return apiKey === row.apiKey ? row : undefined;
    },
  } as unknown as ProductsRepository;
  const caches = {
    cache: (_name: string, ttl: number) => new TtlCache(ttl),
    invalidate: async () => undefined,
  };
  const service = new ProductsService(
    repository,
    caches as never,
    {
      SECRETS_MASTER_KEY: masterKey,
      ROW_CACHE_TTL_MS: 60_000,
    } as never,
  );

  it('accepts the right secret, refuses an unknown key and a wrong secret alike', async () => {
    await expect(service.authenticate(row.apiKey, 'the-right-secret', 'production')).resolves.toMatchObject({
      apiKey: row.apiKey,
    });
    await expect(service.authenticate(row.apiKey, 'wrong', 'production')).resolves.toBeUndefined();
    await expect(service.authenticate('vk_live_unknown', 'wrong', 'production')).resolves.toBeUndefined();
  });

  it('an unknown key costs the same as a wrong secret (median per-round cost ratio within 0.67..1.5)', async () => {
    lookups = 0;
    const { ratio } = await costRatioWithin(
      () => service.authenticate('vk_live_000000000000000000000099', 'wrong', 'production'),
      () => service.authenticate(row.apiKey, 'wrong', 'production'),
      // Measured again (three times in all) only while out of bounds: a real leak is out of bounds every time.
      { low: 0.67, high: 1.5, attempts: 3 },
      { batches: 101, perBatch: 20 },
    );
    expect(ratio).toBeGreaterThan(0.67);
    expect(ratio).toBeLessThan(1.5);
    // Neither path went back to the key table once it was known or known to be missing.
    expect(lookups).toBeLessThanOrEqual(1);
  });
});
