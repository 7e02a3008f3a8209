import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Client } from 'pg';
import { bootApp, createTestEnvironment, rawRequest, type RawResponse, type TestEnvironment } from '../src';
import { fixtureMigrator, FixtureModule } from './fixture/fixture';

/**
 * The one edge for bad input (issue 15, docs/decisions/0010), in both error shapes: text Postgres cannot
 * store is a 400 wherever it is, and every error Fastify, Node or Nest raises is `{message}` without the input.
 */
let env: TestEnvironment;
const apps: Record<'verification' | 'custody', NestFastifyApplication> = {} as never;
const ports: Record<string, number> = {};

beforeAll(async () => {
  env = await createTestEnvironment([fixtureMigrator]);
  for (const shape of ['verification', 'custody'] as const) {
    apps[shape] = await bootApp(FixtureModule.forRoot(env.env, { errorShape: shape }), {
      rpc: false,
      listen: true,
    });
    ports[shape] = (apps[shape].getHttpServer().address() as { port: number }).port;
  }
});

afterAll(async () => {
  await Promise.all(Object.values(apps).map((app) => app?.close()));
  await env?.teardown();
});

const SECRET_MARK = 'zz-echo-mark';

function expectShape(res: RawResponse, status: number, message?: string | RegExp) {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = res.body as { message: unknown; errors?: unknown };
  expect(typeof body.message).toBe('string');
  expect(Object.keys(body).filter((k) => k !== 'message' && k !== 'errors')).toEqual([]);
  if (message) expect(body.message).toMatch(message);
  expect(res.text).not.toContain(SECRET_MARK);
  expect(res.text).not.toMatch(/FST_|statusCode|"error"/);
}

describe.each(['verification', 'custody'] as const)('%s shape', (shape) => {
  const send = (opts: Parameters<typeof rawRequest>[1]) => rawRequest(ports[shape]!, opts);

  it.each([
    ['a path parameter', `/fixture/items/${SECRET_MARK}%00b`, /path contains a NUL/],
    ['a query string', `/fixture/items/x?q=${SECRET_MARK}%00`, /query string contains a NUL/],
    [
      'a lone surrogate in a path parameter',
      `/fixture/items/%ED%A0%80${SECRET_MARK}`,
      /^(Malformed URL|The path contains)/,
    ],
  ])('NUL or invalid Unicode in %s is a 400, not a 500', async (_what, path, message) => {
    expectShape(await send({ path }), 400, message);
  });

  it.each([
    ['a string value', `{"label":"a\\u0000${SECRET_MARK}"}`],
    ['a nested value', `{"label":"x","deep":[{"k":["\\u0000"]}]}`],
    ['a key', `{"label":"x","a\\u0000b":1}`],
    ['an unpaired surrogate', `{"label":"\\ud800${SECRET_MARK}"}`],
  ])('NUL or invalid Unicode in a JSON body (%s) is a 400 and nothing is written', async (_what, json) => {
    const res = await send({
      method: 'POST',
      path: '/fixture/items',
      headers: { 'content-type': 'application/json' },
      body: json,
    });
    expectShape(res, 400, /body contains a NUL/);
    const rows = await rawRequest(ports[shape]!, { path: '/fixture/items' });
    expect(rows.status).toBe(200);
    expect(rows.body).toEqual([]);
  });

  it('a header carrying an escaped NUL-like byte sequence is refused before any handler', async () => {
    // Node's parser refuses a raw NUL in a header; what reaches Fastify is checked by the edge as well.
    const res = await send({ path: '/fixture/items', headers: { 'x-custom': `a\u0000${SECRET_MARK}` } });
    expectShape(res, 400);
  });

  it.each(['%zz', '%C0%AE', '%FF', `${SECRET_MARK}%E0%A4%A`])(
    'a malformed URL (%s) is a 400',
    async (bad) => {
      expectShape(await send({ path: `/fixture/items/${bad}` }), 400, 'Malformed URL');
    },
  );

  it('an over-long path parameter is a 414 that does not echo it', async () => {
    expectShape(await send({ path: `/fixture/items/${SECRET_MARK}${'a'.repeat(300)}` }), 414, 'URI too long');
  });

  it('oversized headers are a 431 in the shape', async () => {
    const res = await send({
      path: '/fixture/items',
      headers: { 'x-big': SECRET_MARK + 'a'.repeat(20_000) },
    });
    expectShape(res, 431, 'Request header fields too large');
  });

  it('malformed JSON, an oversized body and an unsupported media type are 4xx in the shape', async () => {
    const post = (headers: Record<string, string>, body: string) =>
      send({ method: 'POST', path: '/fixture/items', headers, body });
    expectShape(await post({ 'content-type': 'application/json' }, `{"${SECRET_MARK}":`), 400);
    expectShape(
      await post({ 'content-type': 'application/json' }, `{"a":"${'x'.repeat(1_100_000)}"}`),
      413,
      /too large/i,
    );
    expectShape(await post({ 'content-type': `text/${SECRET_MARK}` }, 'x'), 415, /unsupported media type/i);
  });

  it('an unknown route is a 404 that does not echo the path', async () => {
    expectShape(await send({ path: `/${SECRET_MARK}` }), 404, 'Route not found');
  });

  it('a value out of range for its type is a 400, not a 500', async () => {
    const res = await send({
      method: 'POST',
      path: '/fixture/short',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ value: '99999999999' }),
    });
    expectShape(res, 400);
  });

  it('security headers for a JSON API are on every answer, errors included', async () => {
    for (const path of ['/health', '/nowhere']) {
      const res = await send({ path });
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['x-frame-options']).toBe('SAMEORIGIN');
      expect(res.headers['content-security-policy']).toMatch(/default-src 'none'.*frame-ancestors 'none'/);
      expect(res.headers['strict-transport-security']).toMatch(/max-age=31536000/);
      expect(res.headers['referrer-policy']).toBe('no-referrer');
    }
  });
});

describe('a database connection terminated mid-request', () => {
  it('answers 503 in the shape (retry later), and the next request succeeds', async () => {
    const port = ports.custody!;
    const pending = rawRequest(port, { path: '/fixture/slow-query' });
    const admin = new Client({ connectionString: env.db.url });
    await admin.connect();
    try {
      let terminated = 0;
      for (let i = 0; i < 50 && terminated === 0; i++) {
        await new Promise((r) => setTimeout(r, 50));
        const rows = await admin.query(
          `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE '%pg_sleep%'`,
        );
        terminated = rows.rowCount ?? 0;
      }
      expect(terminated).toBe(1);
    } finally {
      await admin.end();
    }
    const res = await pending;
    expectShape(res, 503, /temporarily unavailable/);
    // Recovered without a restart: a caller following the 503's advice (retry with back-off) gets through. The
    // pool may hand out the cut connection once more before its 'end' event has removed it.
    let after = await rawRequest(port, { path: '/fixture/items' });
    for (let retry = 0; retry < 3 && after.status === 503; retry++) {
      await new Promise((r) => setTimeout(r, 200 * 2 ** retry));
      after = await rawRequest(port, { path: '/fixture/items' });
    }
    expect(after.status).toBe(200);
  });
});
