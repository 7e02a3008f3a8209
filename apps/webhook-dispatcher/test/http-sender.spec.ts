import { makeCertificate } from '@tessera/testing';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createSecureContext } from 'node:tls';
import { HttpSender } from '../src/modules/deliveries/http-sender';

type Route = (req: IncomingMessage, res: ServerResponse, body: string) => void;

/**
 * HttpSender against a real local HTTPS receiver: what an attempt records for each way a receiver can answer
 * (or not), and that the connection stays usable afterwards.
 */
describe('HttpSender', () => {
  const certificate = makeCertificate(['receiver.test']);
  const routes = new Map<string, Route>();
  const received: { path: string; headers: IncomingMessage['headers']; body: string }[] = [];
  let server: Server;
  let port = 0;
  /** Most tests: a timeout no handshake on a loaded machine reaches. The timeout tests: 400 ms. */
  let sender: HttpSender;
  let quick: HttpSender;

  const target = (path: string, host = 'receiver.test') => ({
    url: new URL(`https://${host}:${port}${path}`),
    hostname: host,
    address: { address: '127.0.0.1', family: 4 as const },
  });
  const post = (path: string, body = '{"a":1}', by = sender) =>
    by.post(target(path), { 'content-type': 'application/json', 'webhook-id': 'evt-1' }, body);

  beforeAll(async () => {
    server = createServer({ key: certificate.key, cert: certificate.cert }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        received.push({ path: req.url!, headers: req.headers, body });
        const route = routes.get(new URL(req.url!, 'https://x').pathname);
        if (route) route(req, res, body);
        else res.end('ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    const secureContext = createSecureContext({ ca: certificate.cert });
    sender = new HttpSender({ timeoutMs: 10_000, responseBodyLimit: 1024, secureContext });
    quick = new HttpSender({ timeoutMs: 400, responseBodyLimit: 1024, secureContext });
  });

  afterAll(async () => {
    await sender.close(100);
    await quick.close(100);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('sends the body and headers to the path and query, and records a 2xx with its reply', async () => {
    routes.set('/ok', (_req, res) => res.writeHead(202).end('accepted'));
    const result = await post('/ok?x=1', '{"eventType":"wallet.created"}');
    expect(result).toEqual({
      statusCode: 202,
      responseBody: 'accepted',
      errorMessage: null,
      durationMs: expect.any(Number),
      success: true,
    });
    const req = received.at(-1)!;
    expect(req.path).toBe('/ok?x=1');
    expect(req.body).toBe('{"eventType":"wallet.created"}');
    expect(req.headers['webhook-id']).toBe('evt-1');
    expect(req.headers.host).toBe(`receiver.test:${port}`);
  });

  it('records an empty reply as null', async () => {
    routes.set('/empty', (_req, res) => res.writeHead(204).end());
    expect(await post('/empty')).toMatchObject({ statusCode: 204, responseBody: null, success: true });
  });

  it('fails a 5xx with its reply, and a 3xx without following it', async () => {
    routes.set('/boom', (_req, res) => res.writeHead(503).end('down'));
    routes.set('/moved', (_req, res) =>
      res.writeHead(302, { location: `https://receiver.test:${port}/ok` }).end(),
    );
    expect(await post('/boom')).toMatchObject({
      statusCode: 503,
      responseBody: 'down',
      errorMessage: 'HTTP 503',
      success: false,
    });
    const before = received.length;
    expect(await post('/moved')).toMatchObject({
      statusCode: 302,
      errorMessage: 'HTTP 302 (redirects are not followed)',
      success: false,
    });
    expect(received.length).toBe(before + 1);
  });

  it('keeps only the first responseBodyLimit bytes of a reply that never ends, and returns at the cap', async () => {
    routes.set('/endless', (_req, res) => {
      res.writeHead(200);
      const timer = setInterval(() => res.write('x'.repeat(700)), 5);
      res.on('close', () => clearInterval(timer));
    });
    // Ended by the cap, not by the timeout (which would record no status and no reply).
    const result = await post('/endless');
    expect(result.statusCode).toBe(200);
    expect(result.success).toBe(true);
    expect(result.responseBody).toBe('x'.repeat(1024));
    // The connection the capped reply was cut on is not reused: the next attempt still works.
    expect(await post('/ok')).toMatchObject({ statusCode: 202, responseBody: 'accepted' });
  });

  it('gives up after timeoutMs when the headers do not come', async () => {
    routes.set('/silent', () => undefined);
    const result = await post('/silent', '{}', quick);
    expect(result).toMatchObject({
      statusCode: null,
      errorMessage: 'timed out after 400 ms',
      success: false,
    });
    expect(result.durationMs).toBeGreaterThanOrEqual(390);
    expect(result.durationMs).toBeLessThan(2000);
  });

  it('gives up after timeoutMs in all when a reply drips in slower than that (each chunk in time)', async () => {
    routes.set('/drip', (_req, res) => {
      res.writeHead(200);
      const timer = setInterval(() => res.write('.'), 100);
      res.on('close', () => clearInterval(timer));
    });
    const result = await post('/drip', '{}', quick);
    expect(result).toMatchObject({
      statusCode: null,
      errorMessage: 'timed out after 400 ms',
      success: false,
    });
    expect(result.durationMs).toBeLessThan(2000);
    expect(await post('/ok')).toMatchObject({ statusCode: 202 });
  });

  it('names the error when nothing listens, and when the certificate does not cover the host', async () => {
    const closed = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const refused = await sender.post(
      {
        url: new URL(`https://receiver.test:${closed}/`),
        hostname: 'receiver.test',
        address: { address: '127.0.0.1', family: 4 },
      },
      {},
      '{}',
    );
    expect(refused).toMatchObject({ statusCode: null, success: false });
    expect(refused.errorMessage).toMatch(/ECONNREFUSED/);

    const wrongName = await sender.post(target('/ok', 'other.test'), {}, '{}');
    expect(wrongName).toMatchObject({ statusCode: null, success: false });
    expect(wrongName.errorMessage).toMatch(/ERR_TLS_CERT_ALTNAME_INVALID|altnames/);
  });

  it('runs many attempts at once over kept-alive connections', async () => {
    routes.set('/many', (_req, res, body) => res.end(body));
    const headers = { 'content-type': 'application/json' };
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => sender.post(target('/many'), headers, JSON.stringify({ i }))),
    );
    results.forEach((r, i) =>
      expect(r).toMatchObject({ statusCode: 200, responseBody: JSON.stringify({ i }) }),
    );
  });
});
