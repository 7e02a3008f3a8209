import { Logger } from '@nestjs/common';
import { spawnSync } from 'node:child_process';
import { createServer, connect, type Server } from 'node:net';
import { join } from 'node:path';
import { createRedis } from './redis';

/**
 * Decision 0468: a Redis connection that loses its server logs the outage (throttled) instead of letting ioredis
 * print "[ioredis] Unhandled error event" and a stack to stderr for every reconnection. A real Redis
 * (127.0.0.1:6379) is reached through a TCP forwarder on a port of the test's own, taken away and given back.
 */
const REDIS_PORT = Number(new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379').port || 6379);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Forwards `port` to the real Redis until closed. */
function forwarder(port: number): Promise<Server> {
  const server = createServer((client) => {
    const upstream = connect(REDIS_PORT, '127.0.0.1');
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

afterEach(() => jest.restoreAllMocks());

it('a process whose connection cannot reach Redis prints no unhandled error event on stderr', async () => {
  // A real process, so what ioredis prints reaches a real stderr (the built module, as the apps load it).
  const port = await freePort();
  const script = `
    const { createRedis } = require(${JSON.stringify(join(__dirname, '../dist/redis'))});
    const redis = createRedis('redis://127.0.0.1:${port}', { connectionName: 'outage-test', retryStrategy: () => 10 });
    setTimeout(() => redis.disconnect(), 400);`;
  const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 10_000 });
  expect(run.status).toBe(0);
  expect(run.stderr).toBe('');
  expect(run.stdout.match(/ECONNREFUSED/g)?.length).toBe(1);
});

it('an outage is logged once per interval, and the return is logged', async () => {
  const warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  const logged = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
  const port = await freePort();
  // Nothing listens on the port yet: every attempt is refused, one every 10 ms.
  const redis = createRedis(`redis://127.0.0.1:${port}`, {
    connectionName: 'outage-test',
    retryStrategy: () => 10,
  });
  try {
    await sleep(400);
    expect(warned).toHaveBeenCalledTimes(1);
    expect(warned.mock.calls[0]![0]).toMatchObject({
      connection: 'outage-test',
      err: expect.stringContaining('ECONNREFUSED'),
      skipped: 0,
    });

    const server = await forwarder(port);
    try {
      expect(await redis.ping()).toBe('PONG');
      expect(logged).toHaveBeenCalledWith(
        expect.objectContaining({ connection: 'outage-test', downMs: expect.any(Number) }),
        'Redis connection ready again',
      );
      expect(warned).toHaveBeenCalledTimes(1);
    } finally {
      redis.disconnect();
      await new Promise((r) => server.close(r));
    }
  } finally {
    redis.disconnect();
  }
});
