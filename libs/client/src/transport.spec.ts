import { createServer } from 'node:net';
import { createCustodyClient } from './custody-client';
import { TesseraNetworkError } from './errors';
import type { Precise } from './openapi-types';

/** A loopback port with nothing listening: every connection is refused, a real network error. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function client(baseUrl: string) {
  const delays: number[] = [];
  const logged: Record<string, unknown>[] = [];
  const custody = createCustodyClient({
    baseUrl,
    apiKey: 'ck_test_x',
    apiSecret: 'secret',
    sleep: async (ms) => void delays.push(ms),
    random: () => 0.5,
    logger: { warn: (_m, details) => void logged.push(details) },
  });
  return { custody, delays, logged };
}

describe('transport on a refused connection', () => {
  it('retries an idempotent GET with back-off, then throws TesseraNetworkError after 6 tries', async () => {
    const { custody, delays, logged } = client(`http://127.0.0.1:${await closedPort()}`);
    const err = (await custody.assets.list().catch((e) => e)) as TesseraNetworkError;
    expect(err).toBeInstanceOf(TesseraNetworkError);
    expect(err.attempts).toBe(6);
    expect(delays).toEqual([1000, 2000, 4000, 8000, 16000]);
    expect(logged.map((d) => d.reason)).toEqual(Array(5).fill('network-error'));
    expect(JSON.stringify(logged)).not.toContain('secret');
  });

  it('does not retry a POST without an idempotency key', async () => {
    const { custody, delays } = client(`http://127.0.0.1:${await closedPort()}`);
    const err = (await custody.vaults
      .create({ externalId: 'x', name: 'x' })
      .catch((e) => e)) as TesseraNetworkError;
    expect(err).toBeInstanceOf(TesseraNetworkError);
    expect(err.attempts).toBe(1);
    expect(delays).toEqual([]);
  });

  it('retries a transfer (it carries an idempotency key) and stops at once when the caller aborts', async () => {
    const { custody, delays } = client(`http://127.0.0.1:${await closedPort()}`);
    const body = { sourceWalletId: 'a', destinationWalletId: 'b', amount: '1' };
    const err = (await custody.transactions.transfer(body).catch((e) => e)) as TesseraNetworkError;
    expect(err.attempts).toBe(6);
    const controller = new AbortController();
    controller.abort();
    await expect(custody.transactions.transfer(body, { signal: controller.signal })).rejects.toThrow();
    expect(delays).toHaveLength(5);
  });
});

describe('response types from loose and precise documents', () => {
  it('falls back to the handwritten model only when the document says nothing precise', () => {
    type Model = { id: string };
    const loose: Precise<unknown, Model> = { id: 'a' };
    const empty: Precise<never, Model> = { id: 'b' };
    const record: Precise<Record<string, unknown>, Model> = { id: 'c' };
    const precise: Precise<{ id: string; extra: number }, Model> = { id: 'd', extra: 1 };
    // @ts-expect-error the precise type wins: `extra` is required
    const missing: Precise<{ id: string; extra: number }, Model> = { id: 'e' };
    expect([loose, empty, record, precise, missing].map((m) => m.id)).toEqual(['a', 'b', 'c', 'd', 'e']);
  });
});
