import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { rpcResult, WEBHOOK_RPC, type WebhookEventPayload } from '@tessera/contracts';
import { JobQueues, RpcClient, webhookEventJobs } from '@tessera/platform';
import {
  bootApp,
  createTestEnvironment,
  migratorFor,
  type SchemaMigrator,
  type TestEnvironment,
} from '@tessera/testing';
import { DataSource, type EntityManager } from 'typeorm';
import { z } from 'zod';
import { AppModule } from '../../src/app.module';
import { loadEnv } from '../../src/config/env';
import { databaseOptions } from '../../src/database/database';
import { envelope } from '../../src/modules/deliveries/deliveries.service';
import type { HostResolver } from '../../src/modules/deliveries/egress-guard';
import { HttpsReceiver, makeCertificate } from './https-receiver';
import { testResolver } from './resolver';

export const dispatcherMigrator = () =>
  migratorFor(databaseOptions, join(__dirname, '../../src/database/migrations'));

export async function bootDispatcher(
  env: TestEnvironment,
  extra: Record<string, string>,
  resolver?: HostResolver,
): Promise<NestFastifyApplication> {
  return bootApp(AppModule.forRoot(loadEnv({ ...env.env, ...extra }), {}, { resolver }));
}

/** Calls a dispatcher RPC pattern and returns the raw reply ({ok, result} or {ok:false, error}). */
export async function rpc(app: NestFastifyApplication, pattern: string, data: unknown) {
  return app.get(RpcClient).send(pattern, data, rpcResult(z.any()));
}

/**
 * Puts the custody endpoint of `tenantId` at `path` on the receiver (all event types unless
 * `subscribedEventTypes`), and answers its row id.
 */
export async function putEndpoint(
  app: NestFastifyApplication,
  receiver: HttpsReceiver,
  tenantId: string,
  path = `/${tenantId}`,
  subscribedEventTypes?: string[],
): Promise<{ endpointId: string; tenantId: string }> {
  const put = await rpc(app, WEBHOOK_RPC.PUT_ENDPOINT, {
    tenantId,
    source: 'custody',
    body: { url: receiver.url(path), subscribedEventTypes },
  });
  if (!put.ok) throw new Error(`endpoint not put: ${JSON.stringify(put)}`);
  const [row] = await app
    .get(DataSource)
    .query(`SELECT id FROM webhook_endpoints WHERE tenant_id = $1 AND source = 'custody'`, [tenantId]);
  return { endpointId: row.id as string, tenantId };
}

export function event(overrides: Partial<WebhookEventPayload> = {}): WebhookEventPayload {
  const entityId = randomUUID();
  return {
    eventId: randomUUID(),
    source: 'custody',
    tenantId: 'tenant-a',
    eventType: 'wallet.created',
    entityType: 'wallet',
    entityId,
    occurredAt: new Date().toISOString(),
    data: { walletId: entityId, status: 'Active' },
    ...overrides,
  };
}

export async function enqueue(app: NestFastifyApplication, e: WebhookEventPayload): Promise<void> {
  await app.get(JobQueues).add('WEBHOOK_EVENT', e, { jobId: e.eventId });
}

/** Events relayed as the outbox relay sends them: batches of `webhook.events` jobs. */
export async function relayBatch(app: NestFastifyApplication, events: WebhookEventPayload[]): Promise<void> {
  await app.get(JobQueues).addBulk('WEBHOOK_EVENTS', webhookEventJobs(events));
}

/** The most requests of these arrival times that overlap, each lasting `lastsMs`. */
export function mostAtOnce(arrivals: number[], lastsMs: number): number {
  const sorted = [...arrivals].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0; i < sorted.length; i++) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1]! < sorted[i]! + lastsMs) j++;
    most = Math.max(most, j - i + 1);
  }
  return most;
}

/**
 * An HTTPS receiver on loopback and a dispatcher that may deliver to it (its certificate trusted, 127.0.0.1
 * allowed, retry delays scaled down 1,000×), on a fresh test database. `replica()` boots one more dispatcher
 * with the same settings on the same database and Redis, as deployed (deploy/k8s: replicas 2).
 */
export async function dispatcherWithReceiver(
  extra: Record<string, string>,
  resolver: HostResolver = testResolver(),
  migrators: SchemaMigrator[] = [dispatcherMigrator()],
): Promise<{
  env: TestEnvironment;
  app: NestFastifyApplication;
  receiver: HttpsReceiver;
  replica: () => Promise<NestFastifyApplication>;
}> {
  const cert = makeCertificate();
  const receiver = new HttpsReceiver(cert);
  await receiver.start();
  const env = await createTestEnvironment(migrators);
  const replica = () =>
    bootDispatcher(
      env,
      {
        WEBHOOK_ALLOW_PRIVATE_TARGETS: '127.0.0.1/32',
        WEBHOOK_CA_FILE: cert.certFile,
        WEBHOOK_TIME_SCALE: '0.001',
        ...extra,
      },
      resolver,
    );
  return { env, app: await replica(), receiver, replica };
}

/**
 * The plan of `sql` with sequential scans off, as JSON text: whether a retention pass's query can use its
 * index (on a table this small the planner would scan it anyway).
 */
export async function planWithoutSeqScan(db: DataSource, sql: string): Promise<string> {
  const plan = await db.transaction(async (m) => {
    await m.query('SET LOCAL enable_seqscan = off');
    return m.query(`EXPLAIN ${sql}`);
  });
  return JSON.stringify(plan);
}

/**
 * Writes `count` deliveries of one endpoint as a failed first attempt leaves them (pending, due `agoMs` ago), in
 * one statement, so only the poller attempts them; answers their event ids.
 */
export async function insertDue(
  db: Pick<DataSource, 'query'> | Pick<EntityManager, 'query'>,
  endpoint: { endpointId: string; tenantId: string },
  count: number,
  agoMs = 0,
): Promise<string[]> {
  const rows = Array.from({ length: count }, () => {
    const eventId = randomUUID();
    const occurredAt = new Date().toISOString();
    const payload = envelope({
      eventType: 'wallet.created',
      entityType: 'wallet',
      entityId: eventId,
      occurredAt,
      data: { walletId: eventId },
    });
    return { event_id: eventId, entity_id: eventId, payload, occurred_at: occurredAt };
  });
  await db.query(
    `INSERT INTO webhook_deliveries
       (event_id, endpoint_id, tenant_id, source, event_type, entity_type, entity_id, payload, occurred_at,
        status, next_attempt_at)
     SELECT event_id, $2, $3, 'custody', 'wallet.created', 'wallet', entity_id, payload, occurred_at,
            'pending', now() - make_interval(secs => $4::float8 / 1000)
       FROM jsonb_to_recordset($1::jsonb) AS x(event_id uuid, entity_id text, payload text, occurred_at timestamptz)`,
    [JSON.stringify(rows), endpoint.endpointId, endpoint.tenantId, agoMs],
  );
  return rows.map((r) => r.event_id);
}
