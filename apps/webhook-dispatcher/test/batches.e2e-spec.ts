import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { JOBS, type WebhookEventPayload } from '@tessera/contracts';
import { JobQueues, webhookEventJobs } from '@tessera/platform';
import type { TestEnvironment } from '@tessera/testing';
import { DataSource } from 'typeorm';
import { DeliveriesRepository } from '../src/modules/deliveries/deliveries.repository';
import { dispatcherWithReceiver, enqueue, event, putEndpoint } from './support/harness';
import { type HttpsReceiver, waitFor } from './support/https-receiver';

// Decision 0402: relays enqueue `webhook.events.v1` jobs of up to 100 events; arrivals and attempts are
// written in batches (one statement each), with the same guarantees as one event at a time.

let env: TestEnvironment;
let app: NestFastifyApplication;
let receiver: HttpsReceiver;
let db: DataSource;

const TENANT = 'tenant-batch';

beforeAll(async () => {
  ({ env, app, receiver } = await dispatcherWithReceiver({
    WEBHOOK_POLL_MS: '50',
    WEBHOOK_CONCURRENCY: '8',
  }));
  db = app.get(DataSource);
});

afterAll(async () => {
  await app?.close();
  await env?.teardown();
  await receiver?.stop();
});

const configure = (tenantId: string, path: string, subscribedEventTypes?: string[]) =>
  putEndpoint(app, receiver, tenantId, path, subscribedEventTypes);

const ids = (path: string) => receiver.at(path).map((r) => r.headers['webhook-id'] as string);

async function addBatches(events: WebhookEventPayload[], suffix = '') {
  await app.get(JobQueues).addBulk(
    'WEBHOOK_EVENTS',
    webhookEventJobs(events).map((j) => ({ ...j, jobId: `${j.jobId}${suffix}` })),
  );
}

describe('webhook.events.v1: batches of relayed events', () => {
  it('records every event once and delivers each subscribed one exactly once, across overlapping batches', async () => {
    await configure(TENANT, '/batch', ['wallet.created']);
    const subscribed = Array.from({ length: 130 }, () => event({ tenantId: TENANT }));
    const other = Array.from({ length: 20 }, () => event({ tenantId: TENANT, eventType: 'balance.updated' }));
    const noEndpoint = Array.from({ length: 5 }, () => event({ tenantId: 'tenant-without-endpoint' }));
    // One event went through the single-event job first; it must not be delivered again.
    const early = subscribed[0]!;
    await enqueue(app, early);
    await waitFor(
      () => ids('/batch'),
      (seen) => seen.includes(early.eventId),
    );
    const all = [...subscribed, ...other, ...noEndpoint].sort(() => Math.random() - 0.5);
    await addBatches(all);
    // The same events again, cut differently (as a relay replay after a crash could): nothing changes.
    await addBatches(all.slice(7), '-replay');

    await waitFor(
      () => new Set(ids('/batch')).size,
      (n) => n >= subscribed.length,
      30_000,
    );
    const counts = await waitFor(
      async () =>
        (await db.query(
          `SELECT (SELECT count(*)::int FROM received_events WHERE tenant_id IN ($1, 'tenant-without-endpoint')) AS inbox,
                  (SELECT count(*)::int FROM webhook_deliveries WHERE tenant_id = $1) AS deliveries,
                  (SELECT count(*)::int FROM webhook_deliveries WHERE tenant_id = $1 AND status = 'delivered') AS delivered,
                  (SELECT count(*)::int FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
                    WHERE d.tenant_id = $1) AS attempts`,
          [TENANT],
        )) as { inbox: number; deliveries: number; delivered: number; attempts: number }[],
      ([c]) => c!.delivered === subscribed.length,
    );
    expect(counts[0]).toEqual({
      inbox: subscribed.length + other.length + noEndpoint.length,
      deliveries: subscribed.length,
      delivered: subscribed.length,
      attempts: subscribed.length,
    });
    // Exactly once each: no duplicates, nothing unsubscribed.
    expect(ids('/batch').sort()).toEqual(subscribed.map((e) => e.eventId).sort());
  });

  it('keeps at least one endpoint’s share (6) and at most WEBHOOK_CONCURRENCY (8) requests in flight, and never claims a whole batch ahead', async () => {
    // Two endpoints: one alone may hold only its share, 6 of the 8 (decision 0463), and the last 2 permits go only
    // to an endpoint holding fewer than 2 (decision 0472): the two together hold 6 to 8.
    const tenants = ['tenant-bound', 'tenant-bound-2'];
    for (const tenantId of tenants) await configure(tenantId, `/${tenantId}`);
    for (const tenantId of tenants) receiver.on(`/${tenantId}`, { status: 200, delayMs: 40 });
    const events = Array.from({ length: 200 }, (_, i) => event({ tenantId: tenants[i % 2] }));
    receiver.resetInFlight();
    let mostClaimed = 0;
    let watching = true;
    // Claimed, no attempt recorded yet: at most 16 claims (twice the requests) plus the few attempts whose
    // record is being committed; never the job's 200 events at once. A first attempt that gave up waiting for its
    // endpoint's permit (0463) is no claim: released, due for the poller (claimed_until NULL). A loaded CI machine
    // released 139 of them, which this count took for claims.
    const watch = (async () => {
      while (watching) {
        const [row] = await db.query(
          `SELECT count(*)::int AS n FROM webhook_deliveries
            WHERE tenant_id = ANY ($1) AND attempt_count = 0 AND claimed_until > now()`,
          [tenants],
        );
        mostClaimed = Math.max(mostClaimed, row.n);
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    await addBatches(events);
    await waitFor(
      () => tenants.reduce((n, t) => n + receiver.at(`/${t}`).length, 0),
      (n) => n >= events.length,
      30_000,
    );
    watching = false;
    await watch;
    expect(receiver.maxInFlight).toBeGreaterThanOrEqual(6);
    expect(receiver.maxInFlight).toBeLessThanOrEqual(8);
    expect(mostClaimed).toBeGreaterThan(0);
    expect(mostClaimed).toBeLessThan(50);
  });

  it('answers a batch job with the counts of what it did', async () => {
    await configure('tenant-count', '/count');
    const events = [event({ tenantId: 'tenant-count' }), event({ tenantId: 'tenant-count' })];
    const [job] = webhookEventJobs(events);
    const queue = app.get(JobQueues).queue(JOBS.WEBHOOK_EVENTS.queue);
    const added = await queue.add(JOBS.WEBHOOK_EVENTS.name, job!.payload, { jobId: job!.jobId });
    const done = await waitFor(
      () => queue.getJob(added.id!),
      (j) => Boolean(j?.returnvalue),
    );
    expect(done!.returnvalue).toEqual({
      events: 2,
      recorded: 2,
      delivered: 2,
      failed: 0,
      skipped: 0,
      deferred: 0,
    });
  });
});

describe('batched attempt records', () => {
  it('writes an attempt once when two workers record the same claim in one batch', async () => {
    const repo = app.get(DeliveriesRepository);
    const e = event({ tenantId: 'tenant-guard' });
    const claimed = await repo.insertClaimed(
      {
        eventId: e.eventId,
        endpointId: '00000000-0000-4000-8000-000000000001',
        tenantId: e.tenantId,
        source: e.source,
        eventType: e.eventType,
        entityType: e.entityType,
        entityId: e.entityId,
        sequence: null,
        payload: '{}',
        occurredAt: new Date(e.occurredAt),
      },
      30_000,
    );
    expect(claimed).not.toBeNull();
    const attempt = (status: number) => ({
      requestUrl: 'https://receiver.test/guard',
      httpStatusCode: status,
      responseBody: null,
      errorMessage: null,
      durationMs: 3,
      attemptedAt: new Date(),
      success: status === 200,
    });
    // Submitted in the same turn: they go out as one statement.
    const results = await Promise.all([
      repo.recordAttempt(claimed!, attempt(200), {
        status: 'delivered',
        nextAttemptAt: null,
        lastError: null,
      }),
      repo.recordAttempt(claimed!, attempt(500), {
        status: 'failed',
        nextAttemptAt: new Date(),
        lastError: 'HTTP 500',
      }),
    ]);
    expect(results.filter(Boolean)).toHaveLength(1);
    const rows = await db.query(
      'SELECT attempt_number, http_status_code FROM webhook_attempts WHERE delivery_id = $1',
      [claimed!.id],
    );
    expect(rows).toHaveLength(1);
    const [delivery] = await db.query('SELECT status, attempt_count FROM webhook_deliveries WHERE id = $1', [
      claimed!.id,
    ]);
    expect(delivery.attempt_count).toBe(1);
    expect(delivery.status).toBe(results[0] ? 'delivered' : 'failed');
  });

  it('stores a reply with a NUL character (as U+FFFD) instead of failing the attempt record', async () => {
    await configure('tenant-nul', '/nul');
    receiver.on('/nul', { status: 500, body: 'bad\u0000reply' });
    const e = event({ tenantId: 'tenant-nul' });
    await enqueue(app, e);
    const [attempt] = await waitFor(
      () =>
        db.query(
          `SELECT a.response_body FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
            WHERE d.event_id = $1 ORDER BY a.attempt_number LIMIT 1`,
          [e.eventId],
        ),
      (rows) => rows.length > 0,
    );
    expect(attempt.response_body).toBe('bad\uFFFDreply');
  });
});
