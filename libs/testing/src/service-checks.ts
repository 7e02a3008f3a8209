import assert from 'node:assert/strict';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { pingReply, RPC } from '@tessera/contracts';
import { RpcClient } from '@tessera/platform';
import request from 'supertest';
import type { TcpProxy } from './tcp-proxy';

/**
 * What every Tessera service shows once booted: /health with both dependencies up, /metrics in Prometheus
 * text, an echoed X-Request-Id, and an answer to its RPC ping.
 */
export async function assertServiceBasics(
  app: NestFastifyApplication,
  service: string,
  rpc?: { redisUrl: string; namespace: string },
): Promise<void> {
  const http = request(app.getHttpServer());
  const health = await http.get('/health').set('x-request-id', `basics-${service}`);
  assert.equal(health.status, 200, `GET /health answered ${health.status}: ${health.text}`);
  assert.equal(health.body.service, service);
  assert.equal(health.body.checks.postgres.status, 'up');
  assert.equal(health.body.checks.redis.status, 'up');
  assert.equal(health.headers['x-request-id'], `basics-${service}`);

  const metrics = await http.get('/metrics');
  assert.equal(metrics.status, 200);
  assert.match(metrics.text, /http_request_duration_seconds_bucket/);

  if (rpc) {
    const client = new RpcClient(rpc.redisUrl, rpc.namespace);
    try {
      const reply = await client.send(RPC.PING(service), {}, pingReply);
      assert.equal(reply.service, service);
    } finally {
      await client.onApplicationShutdown();
    }
  }
}

/** /health turns 503 when Redis is cut off behind `proxy`, and 200 again once it is back. */
export async function assertHealthFollowsRedis(app: NestFastifyApplication, proxy: TcpProxy): Promise<void> {
  const http = () => request(app.getHttpServer());
  proxy.cut();
  const down = await http().get('/health');
  assert.equal(down.status, 503);
  assert.equal(down.body.checks.redis.status, 'down');
  assert.equal(down.body.checks.postgres.status, 'up');
  proxy.restore();
  const deadline = Date.now() + 15_000;
  while ((await http().get('/health')).status !== 200) {
    if (Date.now() > deadline) throw new Error('/health did not recover after Redis came back');
    await new Promise((r) => setTimeout(r, 100));
  }
}
