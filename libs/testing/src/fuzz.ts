import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { type RouteEntry, routeTable } from '@tessera/platform';
import fc from 'fast-check';
import { Agent, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { appendFileSync } from 'node:fs';

const agent = new Agent({ keepAlive: true, maxSockets: 1, noDelay: true } as never);

/** One request over a kept-alive loopback socket: the real HTTP parser, not an injection. */
function send(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: string | undefined,
): Promise<{ statusCode: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent,
        headers:
          body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ statusCode: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error('no answer within 10 s')));
    req.on('error', reject);
    req.end(body);
  });
}

/** A request as the fuzzer builds it, before credentials are added. */
export interface FuzzRequest {
  method: string;
  /** Path with query string, percent-encoded (sometimes deliberately malformed). */
  url: string;
  headers: Record<string, string>;
  body?: string;
}

export interface FuzzOptions {
  app: NestFastifyApplication;
  shape: 'verification' | 'custody';
  runs: number;
  seed: number;
  /** Headers that make the request authentic (custody signs method, url and body). */
  authenticate: (request: FuzzRequest) => Record<string, string>;
  /** Routes to leave out (operator routes, say, which could revoke the fuzzer's own key). */
  exclude?: (route: RouteEntry) => boolean;
  /** Real ids and values plugged into path parameters and bodies so handlers are reached past lookups. */
  knownValues?: string[];
  /** Field names of the API's bodies and query strings, so generated ones sometimes match. */
  fieldNames?: string[];
}

export interface FuzzReport {
  seed: number;
  runs: number;
  routes: number;
  byStatus: Record<number, number>;
  serverErrors: number;
  badShapes: number;
  failures: { request: FuzzRequest; status: number; body: string }[];
}

/** Percent-encodes any JS string; lone surrogates become the UTF-8 of U+FFFD as a browser would send. */
function encode(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return [...Buffer.from(value, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
  }
}

/** Over the 1 MiB body limit; one string shared by every request that uses it. */
const OVERSIZED_BODY = `{"a":"${'x'.repeat(1_100_000)}"}`;

const MALFORMED = ['%zz', '%C0%AE', '%FF', '%', '%E0%A4%A', '%00', '%ED%A0%80', '..%2F..%2F', '%2e%2e'];

function textArb(known: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.string() },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
    { weight: 2, arbitrary: known.length ? fc.constantFrom(...known) : fc.uuid() },
    { weight: 1, arbitrary: fc.uuid() },
    { weight: 1, arbitrary: fc.constantFrom('\u0000', 'a\u0000b', '\ud800', '\udfff', '', ' ', '\n') },
    { weight: 1, arbitrary: fc.string({ minLength: 150, maxLength: 3000 }) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '0',
        '-1',
        '1e309',
        '0.000000000000000000001',
        '  0.1',
        '00.1',
        '1.5',
        '9'.repeat(80),
      ),
    },
  );
}

function valueArb(known: string[], fields: fc.Arbitrary<string>): fc.Arbitrary<unknown> {
  const leaf = fc.oneof(
    { weight: 5, arbitrary: textArb(known) },
    { weight: 1, arbitrary: fc.integer() },
    { weight: 1, arbitrary: fc.double() },
    { weight: 1, arbitrary: fc.boolean() },
    { weight: 1, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.bigInt().map((b) => Number(b)) },
  );
  return fc.oneof(
    { weight: 6, arbitrary: leaf },
    { weight: 1, arbitrary: fc.array(leaf, { maxLength: 5 }) },
    { weight: 1, arbitrary: fc.dictionary(fields, leaf, { maxKeys: 4 }) },
  );
}

function requestArb(routes: RouteEntry[], opts: FuzzOptions): fc.Arbitrary<FuzzRequest> {
  const known = opts.knownValues ?? [];
  const fields = fc.oneof(
    { weight: 4, arbitrary: opts.fieldNames?.length ? fc.constantFrom(...opts.fieldNames) : fc.string() },
    { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
    { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', 'a\u0000b', '') },
  );
  const value = valueArb(known, fields);
  const segment = fc.oneof(
    { weight: 6, arbitrary: textArb(known).map(encode) },
    { weight: 1, arbitrary: fc.constantFrom(...MALFORMED) },
  );
  const query = fc.dictionary(fields, textArb(known), { maxKeys: 4 }).map((q) =>
    Object.entries(q)
      .map(([k, v]) => `${encode(k)}=${encode(v)}`)
      .join('&'),
  );
  const jsonBody = fc
    .dictionary(fields, value, { maxKeys: 8 })
    .map((o) => ({ type: 'application/json', text: JSON.stringify(o) }));
  const body = fc.oneof(
    { weight: 6, arbitrary: jsonBody },
    {
      weight: 1,
      arbitrary: value.map((v) => ({ type: 'application/json', text: JSON.stringify(v) ?? 'null' })),
    },
    { weight: 1, arbitrary: fc.string().map((t) => ({ type: 'application/json', text: t })) },
    {
      weight: 1,
      arbitrary: fc.record({
        type: fc.constantFrom(
          'text/plain',
          'application/x-www-form-urlencoded',
          'application/xml',
          'x/\u00e9',
        ),
        text: fc.string(),
      }),
    },
    { weight: 1, arbitrary: fc.constant({ type: 'application/json', text: OVERSIZED_BODY }) },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
  const headerValue = fc.oneof(
    fc.string({
      unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
      maxLength: 60,
    }),
    textArb(known).map((v) => encode(v).slice(0, 200)),
  );
  const headers = fc.dictionary(
    fc.oneof(
      fc.constantFrom(
        'idempotency-key',
        'x-request-id',
        'accept',
        'x-forwarded-for',
        'range',
        'if-none-match',
      ),
      fc.stringMatching(/^x-[a-z0-9-]{1,20}$/),
    ),
    headerValue,
    { maxKeys: 3 },
  );
  return fc
    .record({
      route: fc.constantFrom(...routes),
      segments: fc.array(segment, { minLength: 4, maxLength: 4 }),
      query: fc.option(query, { freq: 2 }),
      body: body,
      headers,
    })
    .map(({ route, segments, query: q, body: b, headers: h }) => {
      let i = 0;
      const path = route.url.replace(/:[A-Za-z0-9_]+/g, () => segments[i++ % segments.length]!);
      const hasBody = !['GET', 'HEAD', 'DELETE'].includes(route.method) && b !== undefined;
      return {
        method: route.method,
        url: q ? `${path}?${q}` : path,
        headers: { ...h, ...(hasBody ? { 'content-type': b.type } : {}) },
        body: hasBody ? b.text : undefined,
      };
    });
}

/** Whether a 4xx body is in the contract's error shape. */
function inShape(shape: FuzzOptions['shape'], status: number, text: string): boolean {
  if (shape === 'custody' && status === 429) return text === '';
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return false;
  }
  if (
    typeof body !== 'object' ||
    body === null ||
    typeof (body as { message?: unknown }).message !== 'string'
  )
    return false;
  const keys = Object.keys(body);
  if (shape === 'verification') return keys.length === 1;
  const errors = (body as { errors?: unknown }).errors;
  return (
    keys.every((k) => k === 'message' || k === 'errors') &&
    (errors === undefined ||
      (typeof errors === 'object' &&
        errors !== null &&
        Object.values(errors).every((v) => Array.isArray(v) && v.every((m) => typeof m === 'string'))))
  );
}

/**
 * Sends `runs` generated requests (fixed seed, printed for replay) to every route of the app's route table,
 * with valid credentials, over a real loopback socket (Node's parser, Fastify's hooks and parsers, guards,
 * handlers, filters). Every answer must be below 500 and every 4xx in the contract's shape.
 */
export async function fuzzApi(opts: FuzzOptions): Promise<FuzzReport> {
  const fastify = opts.app.getHttpAdapter().getInstance();
  const server = opts.app.getHttpServer() as Server;
  if (!server.listening) await opts.app.listen(0, '127.0.0.1');
  const port = (server.address() as AddressInfo).port;
  const routes = routeTable(fastify as never).filter(
    (r) => r.method !== 'HEAD' && r.method !== 'OPTIONS' && !(opts.exclude?.(r) ?? false),
  );
  const report: FuzzReport = {
    seed: opts.seed,
    runs: 0,
    routes: routes.length,
    byStatus: {},
    serverErrors: 0,
    badShapes: 0,
    failures: [],
  };
  process.stdout.write(
    `fuzz ${opts.shape}: seed ${opts.seed}, ${opts.runs} requests over ${routes.length} routes\n`,
  );
  // Generated lazily, one at a time; the property always holds so nothing shrinks: failures are collected.
  await fc.assert(
    fc.asyncProperty(requestArb(routes, opts), async (request) => {
      const headers = { ...request.headers, ...opts.authenticate(request) };
      if (process.env.FUZZ_TRACE)
        appendFileSync(process.env.FUZZ_TRACE, `${request.method} ${request.url.slice(0, 200)}\n`);
      const res = await send(port, request.method, request.url, headers, request.body).catch(
        (err: Error) => ({ statusCode: 0, body: err.message }),
      );
      report.runs++;
      report.byStatus[res.statusCode] = (report.byStatus[res.statusCode] ?? 0) + 1;
      // No answer at all (a hang, a reset) counts with the 5xx: the server failed the request.
      const serverError = res.statusCode >= 500 || res.statusCode === 0;
      const badShape =
        res.statusCode >= 400 && res.statusCode < 500 && !inShape(opts.shape, res.statusCode, res.body);
      if (serverError) report.serverErrors++;
      if (badShape) report.badShapes++;
      if ((serverError || badShape) && report.failures.length < 20) {
        report.failures.push({ request, status: res.statusCode, body: res.body.slice(0, 300) });
      }
      return true;
    }),
    { seed: opts.seed, numRuns: opts.runs },
  );
  process.stdout.write(
    `fuzz ${opts.shape}: seed ${opts.seed}, ${report.runs} requests, 5xx ${report.serverErrors}, ` +
      `4xx off-shape ${report.badShapes}, by status ${JSON.stringify(report.byStatus)}\n`,
  );
  return report;
}

export interface FuzzVerdictOptions {
  runs: number;
  seed: number;
  /** How the API's 4xx shape is named in the test title. */
  shapeTitle: string;
  /** The share of 401 answers above which the fuzzer did not reach the handlers. */
  max401Share: number;
  /** A normal call after the run, which must still succeed. */
  afterwards: () => Promise<unknown>;
}

/** The verdict of a fuzz run as jest tests (issue 15): the count, no 5xx, every 4xx in the API's shape. */
export function describeFuzzVerdict(report: () => FuzzReport, opts: FuzzVerdictOptions): void {
  it(`sent ${opts.runs} requests with seed ${opts.seed}`, () => {
    expect(report().runs).toBe(opts.runs);
    expect(report().routes).toBeGreaterThan(10);
  });

  it('no answer is a 5xx', () => {
    expect(report().failures.filter((f) => f.status >= 500)).toEqual([]);
    expect(report().serverErrors).toBe(0);
  });

  it(`every 4xx is in ${opts.shapeTitle}`, () => {
    expect(report().failures).toEqual([]);
    expect(report().badShapes).toBe(0);
  });

  it('reached the handlers: most answers are not authentication failures', () => {
    const byStatus = report().byStatus;
    const total = Object.values(byStatus).reduce((a, b) => a + b, 0);
    expect((byStatus[401] ?? 0) / total).toBeLessThan(opts.max401Share);
    expect(Object.keys(byStatus).some((s) => s.startsWith('2'))).toBe(true);
  });

  it('the API still answers normally afterwards', async () => {
    await opts.afterwards();
  });
}
