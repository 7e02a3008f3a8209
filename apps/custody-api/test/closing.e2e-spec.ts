import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { type Harness, startHarness } from './support';

/**
 * A request that reaches a server while it closes (decision 0489): a request pipelined behind one still in
 * flight, on a kept-alive connection, is answered in the contract's error shape with Retry-After: 1 and
 * Connection: close. Fastify answered it itself (`{error, message, statusCode}`, no Retry-After).
 */

let h: Harness;

beforeAll(async () => {
  h = await startHarness({}, { worker: false, listen: true });
});
afterAll(async () => {
  await h?.env.teardown();
});

/** Everything the server writes on `socket` until it closes the connection. */
function readUntilEnd(socket: Socket): Promise<string> {
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (text += chunk));
  return new Promise((resolve, reject) => {
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
}

/** The responses in a keep-alive stream, each with its status, lower-cased headers and body. */
function responses(text: string) {
  const out: { status: number; headers: Record<string, string>; body: string }[] = [];
  let rest = text;
  while (rest.startsWith('HTTP/1.1 ')) {
    const headEnd = rest.indexOf('\r\n\r\n');
    const [statusLine, ...lines] = rest.slice(0, headEnd).split('\r\n');
    const headers = Object.fromEntries(
      lines.map((line) => {
        const colon = line.indexOf(':');
        return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()];
      }),
    );
    const length = Number(headers['content-length'] ?? 0);
    const bodyStart = headEnd + 4;
    out.push({
      status: Number(statusLine.split(' ')[1]),
      headers,
      body: rest.slice(bodyStart, bodyStart + length),
    });
    rest = rest.slice(bodyStart + length);
  }
  return out;
}

it('a request arriving while the server closes is 503 in the contract shape, Retry-After: 1, Connection: close', async () => {
  const { port } = h.api.getHttpServer().address() as AddressInfo;
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  const received = readUntilEnd(socket);
  // The first request is in flight (its body not all sent), so the close waits for this connection.
  const body = '{"name":"x"}';
  socket.write(
    `POST /vaults HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${body.length}\r\n\r\n${body.slice(0, 4)}`,
  );
  await new Promise((r) => setTimeout(r, 200));
  const closed = h.api.close();
  await new Promise((r) => setTimeout(r, 300));
  // The rest of the first body, then a second request on the same kept-alive connection.
  socket.write(`${body.slice(4)}GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n`);
  const [first, second] = responses(await received);
  await closed;
  expect(first.status).toBe(401);
  expect({ status: second.status, retryAfter: second.headers['retry-after'] }).toEqual({
    status: 503,
    retryAfter: '1',
  });
  expect(second.headers.connection).toBe('close');
  expect(second.headers['content-type']).toMatch(/^application\/json/);
  expect(JSON.parse(second.body)).toEqual({ message: 'The service is shutting down; retry with back-off' });
});
