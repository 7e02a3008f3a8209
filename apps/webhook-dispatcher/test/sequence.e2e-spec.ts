import { randomUUID } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { WEBHOOK_RPC, webhookEnvelope } from '@tessera/contracts';
import { appendToOutbox, type OutboxEvent } from '@tessera/platform';
import { bootApp, type TestEnvironment } from '@tessera/testing';
import { DataSource } from 'typeorm';
import { dispatcherMigrator, dispatcherWithReceiver, rpc } from './support/harness';
import { type HttpsReceiver, type ReceivedRequest, waitFor } from './support/https-receiver';
import { ProducerModule, producerMigrator } from './support/producer';
import { testResolver } from './support/resolver';

/**
 * Ordered webhooks (decision 0225): the outbox numbers each entity's events without gaps in the producer's
 * transaction, the relay and the dispatcher carry the number into every envelope, and retries and manual
 * re-queues resend it unchanged. Real Postgres, Redis, relay, dispatcher and HTTPS receiver.
 */
let env: TestEnvironment;
let dispatcher: NestFastifyApplication;
let producer: NestFastifyApplication;
let receiver: HttpsReceiver;
let producerDb: DataSource;

beforeAll(async () => {
  ({
    env,
    app: dispatcher,
    receiver,
  } = await dispatcherWithReceiver({ WEBHOOK_POLL_MS: '20', WEBHOOK_MAX_ATTEMPTS: '2' }, testResolver(), [
    dispatcherMigrator(),
    producerMigrator,
  ]));
  producer = await bootApp(ProducerModule.forRoot(env.env, { pollMs: 200 }), { rpc: false });
  producerDb = producer.get(DataSource);
}, 60_000);

afterAll(async () => {
  await producer?.close();
  await dispatcher?.close();
  await env?.teardown();
  await receiver?.stop();
});

async function configure(tenantId: string, path: string, subscribedEventTypes?: string[]): Promise<void> {
  const reply = await rpc(dispatcher, WEBHOOK_RPC.PUT_ENDPOINT, {
    tenantId,
    source: 'custody',
    body: { url: receiver.url(path), ...(subscribedEventTypes ? { subscribedEventTypes } : {}) },
  });
  expect(reply.ok).toBe(true);
}

const statusEvent = (tenantId: string, transactionId: string, status: string): OutboxEvent => ({
  tenantId,
  eventType: 'transaction.status.updated',
  entityType: 'transaction',
  entityId: transactionId,
  data: { transactionId, status },
});

const bodies = (path: string, entityId: string): Record<string, unknown>[] =>
  receiver
    .at(path)
    .map((r: ReceivedRequest) => JSON.parse(r.rawBody) as Record<string, unknown>)
    .filter((b) => b.entityId === entityId);

async function delivery(tenantId: string, eventId: string) {
  const row = await waitFor(
    async () =>
      (
        await dispatcher
          .get(DataSource)
          .query('SELECT id FROM webhook_deliveries WHERE event_id = $1', [eventId])
      )[0] as { id: string } | undefined,
    (r) => Boolean(r),
  );
  const reply = await rpc(dispatcher, WEBHOOK_RPC.GET_DELIVERY, { tenantId, source: 'custody', id: row!.id });
  expect(reply.ok).toBe(true);
  return (
    reply as {
      result: { id: string; status: string; sequence: number | null; payload: string; attemptCount: number };
    }
  ).result;
}

describe('ordered webhooks: sequence', () => {
  it('numbers 50 concurrent writers of one entity 1..50 without gaps; rolled-back writers leave none', async () => {
    const tenant = 'tenant-seq';
    await configure(tenant, '/seq');
    const hot = randomUUID();
    const other = randomUUID();
    // 50 transactions race on one entity (and interleave with another entity); 10 more roll back mid-way.
    const writers = Array.from({ length: 50 }, (_, i) =>
      producerDb.transaction(async (manager) => {
        const events = [statusEvent(tenant, hot, `s${i}`)];
        if (i % 5 === 0) events.push(statusEvent(tenant, other, `o${i}`));
        await appendToOutbox(manager, events);
      }),
    );
    const rollbacks = Array.from({ length: 10 }, (_, i) =>
      producerDb
        .transaction(async (manager) => {
          await appendToOutbox(manager, [statusEvent(tenant, hot, `rollback${i}`)]);
          throw new Error('rolled back on purpose');
        })
        .catch((err: Error) => err.message),
    );
    const [, failed] = await Promise.all([Promise.all(writers), Promise.all(rollbacks)]);
    expect(failed.every((m) => m === 'rolled back on purpose')).toBe(true);
    // One more row written by a plain INSERT (the hot paths' way) continues the same count.
    await producerDb.query(
      `INSERT INTO outbox (id, tenant_id, event_type, entity_type, entity_id, data, occurred_at)
       VALUES (gen_random_uuid(), $1, 'transaction.status.updated', 'transaction', $2, '{}', now())`,
      [tenant, hot],
    );

    const rows: { entity_id: string; sequence: string; data: { status?: string } }[] = await producerDb.query(
      'SELECT entity_id, sequence, data FROM outbox WHERE entity_id = ANY($1) ORDER BY sequence',
      [[hot, other]],
    );
    const hotSeq = rows.filter((r) => r.entity_id === hot).map((r) => Number(r.sequence));
    const otherSeq = rows.filter((r) => r.entity_id === other).map((r) => Number(r.sequence));
    expect(hotSeq).toEqual(Array.from({ length: 51 }, (_, i) => i + 1));
    expect(otherSeq).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
    expect(rows.some((r) => String(r.data.status).startsWith('rollback'))).toBe(false);
    const [counter] = await producerDb.query(
      `SELECT last_sequence FROM outbox_sequence WHERE tenant_id = $1 AND entity_type = 'transaction' AND entity_id = $2`,
      [tenant, hot],
    );
    expect(Number(counter.last_sequence)).toBe(51);

    // End to end: every envelope the receiver got carries its row's number, and they form 1..51 again.
    await waitFor(
      () => bodies('/seq', hot),
      (b) => b.length === 51,
      20_000,
    );
    const received = bodies('/seq', hot);
    for (const b of received) expect(webhookEnvelope.safeParse(b).success).toBe(true);
    expect(received.map((b) => b.sequence as number).sort((a, b) => a - b)).toEqual(hotSeq);
    // Each envelope's sequence is the one its outbox row got (same status, same number).
    const byStatus = new Map(rows.map((r) => [`${r.entity_id}:${r.data.status}`, Number(r.sequence)]));
    for (const b of received) {
      const status = (b.data as { status?: string }).status;
      if (status !== undefined) expect(b.sequence).toBe(byStatus.get(`${hot}:${status}`));
    }
    const stored: { sequence: string }[] = await dispatcher
      .get(DataSource)
      .query('SELECT sequence FROM webhook_deliveries WHERE entity_id = $1 ORDER BY sequence', [hot]);
    expect(stored.map((r) => Number(r.sequence))).toEqual(hotSeq);
  }, 60_000);

  it('numbers rows written under any search_path (the trigger names its own schema statically)', async () => {
    const entity = randomUUID();
    const [{ prosrc }] = await producerDb.query(
      `SELECT prosrc FROM pg_proc WHERE proname = 'outbox_assign_sequence' AND pronamespace = 'producer'::regnamespace`,
    );
    expect(prosrc).toContain('producer.outbox_sequence'); // planned once per session, not on every row
    expect(prosrc).not.toContain('EXECUTE');
    const sequences = await producerDb.transaction(async (m) => {
      await m.query('SET LOCAL search_path = public');
      const rows: { sequence: string }[] = await m.query(
        `INSERT INTO producer.outbox (id, tenant_id, event_type, entity_type, entity_id, data, occurred_at)
         SELECT gen_random_uuid(), 'tenant-path', 'wallet.created', 'wallet', $1, '{}', now()
         FROM generate_series(1, 3) RETURNING sequence`,
        [entity],
      );
      return rows.map((r) => Number(r.sequence)).sort((a, b) => a - b);
    });
    expect(sequences).toEqual([1, 2, 3]);
  });

  it("numbers every type of the entity's events: an endpoint subscribed to some types gets their numbers, with the others' skipped", async () => {
    const tenant = 'tenant-seq-subset';
    await configure(tenant, '/seq-subset', ['transaction.status.updated']);
    const tx = randomUUID();
    // What custody writes for one transaction: created (1), then two moves (2, 3), each in its own commit.
    const created: OutboxEvent = {
      ...statusEvent(tenant, tx, 'Submitted'),
      eventType: 'transaction.created',
    };
    const [createdId] = await producerDb.transaction((m) => appendToOutbox(m, [created]));
    await producerDb.transaction((m) => appendToOutbox(m, [statusEvent(tenant, tx, 'PendingSignature')]));
    await producerDb.transaction((m) => appendToOutbox(m, [statusEvent(tenant, tx, 'Broadcasting')]));
    const received = await waitFor(
      () => bodies('/seq-subset', tx),
      (b) => b.length === 2,
    );
    // The entity's own numbers, as every endpoint and the delivery detail have them: 1 was the created event,
    // which this endpoint left out (docs/webhooks.md, "Ordering"). Applied in sequence order, with no gap awaited.
    const byNumber = received.sort((a, b) => (a.sequence as number) - (b.sequence as number));
    expect(byNumber.map((b) => [b.eventType, b.sequence, (b.data as { status: string }).status])).toEqual([
      ['transaction.status.updated', 2, 'PendingSignature'],
      ['transaction.status.updated', 3, 'Broadcasting'],
    ]);
    // The created event reached the dispatcher (its inbox row, with its number) and got no delivery.
    const inbox: { sequence: string }[] = await dispatcher
      .get(DataSource)
      .query('SELECT sequence FROM received_events WHERE event_id = $1', [createdId]);
    expect(inbox.map((r) => Number(r.sequence))).toEqual([1]);
    const deliveries: unknown[] = await dispatcher
      .get(DataSource)
      .query('SELECT 1 FROM webhook_deliveries WHERE event_id = $1', [createdId]);
    expect(deliveries).toHaveLength(0);
  });

  it('keeps the sequence across an automatic retry (the receiver fails first, then succeeds)', async () => {
    const tenant = 'tenant-seq-retry';
    await configure(tenant, '/seq-retry');
    const tx = randomUUID();
    const [first] = await producerDb.transaction((m) =>
      appendToOutbox(m, [statusEvent(tenant, tx, 'Submitted')]),
    );
    await waitFor(
      () => delivery(tenant, first!),
      (x) => x.status === 'delivered',
    );
    receiver.on('/seq-retry', { status: 500 }, { status: 204 });
    const [eventId] = await producerDb.transaction((m) =>
      appendToOutbox(m, [statusEvent(tenant, tx, 'PendingSignature')]),
    );
    const d = await waitFor(
      () => delivery(tenant, eventId!),
      (x) => x.status === 'delivered',
      15_000,
    );
    const attempts = bodies('/seq-retry', tx).filter(
      (b) => (b.data as { status: string }).status === 'PendingSignature',
    );
    expect(d.attemptCount).toBe(2);
    expect(attempts).toHaveLength(2);
    expect(attempts.map((b) => b.sequence)).toEqual([2, 2]);
    expect(d.sequence).toBe(2);
    expect(JSON.parse(d.payload).sequence).toBe(2);
  }, 30_000);

  it('keeps the sequence across a manual re-queue of a dead delivery', async () => {
    const tenant = 'tenant-seq-requeue';
    await configure(tenant, '/seq-requeue');
    receiver.on('/seq-requeue', { status: 503 });
    const tx = randomUUID();
    const ids = await producerDb.transaction((m) =>
      appendToOutbox(m, [statusEvent(tenant, tx, 'Submitted'), statusEvent(tenant, tx, 'Broadcasting')]),
    );
    const dead = await waitFor(
      () => delivery(tenant, ids[1]!),
      (x) => x.status === 'dead',
      15_000,
    );
    expect(dead.sequence).toBe(2);
    receiver.on('/seq-requeue', { status: 200 });
    const retried = await rpc(dispatcher, WEBHOOK_RPC.RETRY_DELIVERY, {
      tenantId: tenant,
      source: 'custody',
      id: dead.id,
    });
    expect(retried).toMatchObject({ ok: true, result: { id: dead.id, sequence: 2 } });
    const done = await waitFor(
      () => delivery(tenant, ids[1]!),
      (x) => x.status === 'delivered',
      15_000,
    );
    expect(done.attemptCount).toBe(3);
    const sent = bodies('/seq-requeue', tx).filter(
      (b) => (b.data as { status: string }).status === 'Broadcasting',
    );
    expect(sent).toHaveLength(3);
    expect(sent.every((b) => b.sequence === 2)).toBe(true);
  }, 30_000);
});
