import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { connect, type Socket } from 'node:net';
import { bootApp, createTestEnvironment, type TestEnvironment } from '../src';
import { fixtureMigrator, FixtureModule } from './fixture/fixture';

/**
 * Decision 0499: a request must arrive whole within HTTP_REQUEST_TIMEOUT_MS. Fastify turns Node's bound off, so a
 * client that sent its body (or its headers) a byte at a time held a connection for ever. A real server on
 * loopback and a raw socket: the late request answers 408 in the error shape and its connection closes; the time
 * a kept-alive connection waits between two requests is not counted.
 */
const BOUND_MS = 1000;
let env: TestEnvironment;
let app: NestFastifyApplication;
let port: number;

beforeAll(async () => {
  env = await createTestEnvironment([fixtureMigrator]);
  app = await bootApp(FixtureModule.forRoot({ ...env.env, HTTP_REQUEST_TIMEOUT_MS: String(BOUND_MS) }), {
    rpc: false,
    listen: true,
  });
  port = (app.getHttpServer().address() as { port: number }).port;
}, 60_000);

afterAll(async () => {
  await app?.close();
  await env?.teardown();
});

interface Outcome {
  /** Everything the server sent before it closed the connection. */
  answer: string;
  /** From the first byte sent to the close. */
  elapsedMs: number;
}

/**
 * Sends `head`, then one byte of `drip` every 100 ms (the connection is never idle) until the server closes it;
 * answers what came back. Fails after 10 s.
 */
function dripping(head: string, drip: string): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(port, '127.0.0.1');
    const started = Date.now();
    let answer = '';
    let sent = 0;
    const timer = setInterval(() => {
      if (socket.writable && sent < drip.length) socket.write(drip[sent++]!);
    }, 100);
    const giveUp = setTimeout(
      () => socket.destroy(new Error('the server never closed the connection')),
      10_000,
    );
    socket.on('connect', () => socket.write(head));
    socket.on('data', (d) => (answer += d.toString('utf8')));
    socket.on('error', (err) => {
      if (!answer) reject(err);
    });
    socket.on('close', () => {
      clearInterval(timer);
      clearTimeout(giveUp);
      resolve({ answer, elapsedMs: Date.now() - started });
    });
  });
}

const TIMEOUT_ANSWER = /^HTTP\/1\.1 408 Request Timeout\r\n[\s\S]*\r\n\r\n\{"message":"Request timeout"\}$/;

describe('slow clients (HTTP_REQUEST_TIMEOUT_MS)', () => {
  it('a body sent a byte every 100 ms is cut at the bound: 408 in the error shape, connection closed', async () => {
    const body = JSON.stringify({ label: 'x'.repeat(200) });
    const { answer, elapsedMs } = await dripping(
      `POST /fixture/items HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
      body,
    );
    expect(answer).toMatch(TIMEOUT_ANSWER);
    expect(answer).toMatch(/\r\nContent-Type: application\/json/);
    // The bound plus Node's check interval (a tenth of it), with room for a loaded machine.
    expect(elapsedMs).toBeGreaterThanOrEqual(BOUND_MS - 50);
    expect(elapsedMs).toBeLessThan(BOUND_MS * 4);
    // Nothing was stored from the cut request.
    const rows = await fetch(`http://127.0.0.1:${port}/fixture/items`).then((r) => r.json());
    expect(rows).toEqual([]);
  });

  it('headers sent a byte at a time are cut at the bound too', async () => {
    const { answer, elapsedMs } = await dripping(
      'GET /fixture/items HTTP/1.1\r\nHost: 127.0.0.1\r\n',
      `X-Slow: ${'a'.repeat(100)}`,
    );
    expect(answer).toMatch(TIMEOUT_ANSWER);
    expect(elapsedMs).toBeGreaterThanOrEqual(BOUND_MS - 50);
    expect(elapsedMs).toBeLessThan(BOUND_MS * 4);
  });

  it('a kept-alive connection may wait longer than the bound between two requests', async () => {
    const socket = connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const ask = () =>
      new Promise<string>((resolve) => {
        socket.once('data', (d) => resolve(d.toString('utf8')));
        socket.write('GET /fixture/items HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      });
    try {
      expect(await ask()).toMatch(/^HTTP\/1\.1 200 /);
      await new Promise((r) => setTimeout(r, BOUND_MS * 1.5));
      expect(await ask()).toMatch(/^HTTP\/1\.1 200 /);
    } finally {
      socket.destroy();
    }
  });

  it('a handler may take longer than the bound: only receiving the request is bounded', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/fixture/slow?ms=${BOUND_MS * 2}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ waitedMs: BOUND_MS * 2 });
  });

  it('without the variable a request gets 300 s and its headers 60 s (Node’s own bounds, which Fastify turns off)', async () => {
    const plain = await bootApp(FixtureModule.forRoot(env.env), { rpc: false });
    try {
      const server = plain.getHttpServer();
      expect([server.requestTimeout, server.headersTimeout]).toEqual([300_000, 60_000]);
    } finally {
      await plain.close();
    }
  });
});
