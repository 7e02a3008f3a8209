import { randomUUID } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { WEBHOOK_RPC } from '@tessera/contracts';
import { appendToOutbox, OutboxRelay } from '@tessera/platform';
import { bootApp, createTestEnvironment, type TestEnvironment } from '@tessera/testing';
import { DataSource } from 'typeorm';
import { bootDispatcher, dispatcherMigrator, planWithoutSeqScan, rpc } from './support/harness';
import { HttpsReceiver, makeCertificate, waitFor } from './support/https-receiver';
import { ProducerModule, producerMigrator } from './support/producer';
import { testResolver } from './support/resolver';

let env: TestEnvironment;
let dispatcher: NestFastifyApplication;
let producer: NestFastifyApplication;
let receiver: HttpsReceiver;
let producerDb: DataSource;

beforeAll(async () => {
  const cert = makeCertificate();
  receiver = new HttpsReceiver(cert);
  await receiver.start();
  env = await createTestEnvironment([dispatcherMigrator(), producerMigrator]);
  dispatcher = await bootDispatcher(
    env,
    { WEBHOOK_ALLOW_PRIVATE_TARGETS: '127.0.0.1/32', WEBHOOK_CA_FILE: cert.certFile },
    testResolver(),
  );
  // A 30 s poll: anything faster than that came through a wake (in process, or LISTEN/NOTIFY).
  producer = await bootApp(ProducerModule.forRoot(env.env, { pollMs: 30_000 }), { rpc: false });
  producerDb = producer.get(DataSource);
  const put = await rpc(dispatcher, WEBHOOK_RPC.PUT_ENDPOINT, {
    tenantId: 'tenant-r',
    source: 'custody',
    body: { url: receiver.url('/relay') },
  });
  expect(put.ok).toBe(true);
});

afterAll(async () => {
  await producer?.close();
  await dispatcher?.close();
  await env?.teardown();
  await receiver?.stop();
});

const walletEvent = () => {
  const walletId = randomUUID();
  return {
    tenantId: 'tenant-r',
    eventType: 'wallet.created',
    entityType: 'wallet',
    entityId: walletId,
    data: { walletId, status: 'Active' },
  };
};

/** Appends one event through `db`, then waits for its delivery: well within 2 s, so not the 30 s poll. */
async function appendAndAwaitDelivery(db: DataSource) {
  const event = walletEvent();
  const committedAt = await db.transaction(async (manager) => {
    await appendToOutbox(manager, [event]);
    return Date.now();
  });
  const reqs = await waitFor(
    () => receiver.at('/relay').filter((r) => r.rawBody.includes(event.entityId)),
    (r) => r.length === 1,
    5000,
  );
  expect(reqs[0]!.at - committedAt).toBeLessThan(2000);
  return { event, reqs };
}

describe('outbox relay', () => {
  it('is woken by NOTIFY after the commit of a producer without a relay of its own (another process)', async () => {
    // Another DataSource on the producer's schema stands for another process (say custody's API, whose relay
    // runs in its worker): it has no local relay, so its commit is followed by a NOTIFY on the channel.
    const other = new DataSource({ ...producerDb.options, poolSize: 2 } as never);
    await other.initialize();
    try {
      await appendAndAwaitDelivery(other);
    } finally {
      await other.destroy();
    }
  });

  it('relays a committed outbox row at commit (its own relay, woken in process), long before the backstop poll', async () => {
    const { event, reqs } = await appendAndAwaitDelivery(producerDb);
    const rows = await producerDb.query(
      'SELECT p.id FROM outbox o JOIN outbox_pending p ON p.id = o.id WHERE o.entity_id = $1',
      [event.entityId],
    );
    expect(rows).toEqual([]); // taken off the pending queue
    expect(JSON.parse(reqs[0]!.rawBody)).toMatchObject({
      eventType: 'wallet.created',
      entityId: event.entityId,
    });
  });

  it('never relays a rolled-back event', async () => {
    const event = walletEvent();
    await producerDb
      .transaction(async (manager) => {
        await appendToOutbox(manager, [event]);
        throw new Error('rollback');
      })
      .catch(() => undefined);
    const other = walletEvent();
    await producerDb.transaction((manager) => appendToOutbox(manager, [other]));
    await waitFor(
      () => receiver.at('/relay').filter((r) => r.rawBody.includes(other.entityId)),
      (r) => r.length === 1,
    );
    expect(receiver.at('/relay').filter((r) => r.rawBody.includes(event.entityId))).toHaveLength(0);
    expect(await producerDb.query('SELECT 1 FROM outbox WHERE entity_id = $1', [event.entityId])).toEqual([]);
  });

  it('relays a burst of 300 events in six transactions, each once to the dispatcher', async () => {
    const events = Array.from({ length: 300 }, walletEvent);
    for (let i = 0; i < events.length; i += 50) {
      await producerDb.transaction((manager) => appendToOutbox(manager, events.slice(i, i + 50)));
    }
    const ids = new Set(events.map((e) => e.entityId));
    await waitFor(
      () => receiver.at('/relay').filter((r) => ids.has(JSON.parse(r.rawBody).entityId)),
      (r) => r.length === 300,
      15_000,
    );
    const dispatcherDb = dispatcher.get(DataSource);
    const [{ n }] = await dispatcherDb.query(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE entity_id = ANY($1)`,
      [[...ids]],
    );
    expect(n).toBe(300);
    const [{ left }] = await producerDb.query('SELECT count(*)::int AS left FROM outbox_pending');
    expect(left).toBe(0);
  });

  it('deletes relayed rows past OUTBOX_RETENTION_HOURS (168 by default), and only those', async () => {
    const insert = (age: string) =>
      producerDb.query(
        `INSERT INTO outbox (id, tenant_id, event_type, entity_type, entity_id, data, occurred_at, created_at)
         VALUES (gen_random_uuid(), 'tenant-old', 'wallet.created', 'wallet', gen_random_uuid()::text, '{}', now(),
                 now() - interval '${age}') RETURNING id`,
      );
    const [[old], [recent], [stuck]] = [
      await insert('200 hours'),
      await insert('167 hours'),
      await insert('300 hours'),
    ];
    // The first two are taken off the queue as a relay does; the third stays queued (as after a relay outage
    // longer than the retention; held here so that the running relay skips it) and is not deleted unrelayed.
    await producerDb.query('DELETE FROM outbox_pending WHERE id = ANY($1)', [[old.id, recent.id]]);
    const holder = producerDb.createQueryRunner();
    await holder.startTransaction();
    let deleted: number;
    let again: number;
    try {
      const held = await holder.query('SELECT id FROM outbox_pending WHERE id = $1 FOR UPDATE', [stuck.id]);
      expect(held).toHaveLength(1);
      deleted = await producer.get(OutboxRelay).prune();
      again = await producer.get(OutboxRelay).prune();
    } finally {
      await holder.rollbackTransaction();
      await holder.release();
    }
    expect(deleted).toBe(1);
    expect(again).toBe(0);
    const left = await producerDb.query('SELECT id FROM outbox WHERE id = ANY($1) ORDER BY created_at', [
      [old.id, recent.id, stuck.id],
    ]);
    expect(left).toEqual([{ id: stuck.id }, { id: recent.id }]);
    // The pass can use the index.
    const plan = await planWithoutSeqScan(
      producerDb,
      `SELECT id FROM outbox WHERE created_at < now() - make_interval(hours => 168) ORDER BY created_at LIMIT 5000`,
    );
    expect(plan).toContain('outbox_created_idx');
  });

  it('stays idle when disabled (OUTBOX_RELAY_ENABLED=false)', async () => {
    const idle = await bootApp(ProducerModule.forRoot({ ...env.env, OUTBOX_RELAY_ENABLED: 'false' }), {
      rpc: false,
    });
    try {
      await producer.close();
      producer = undefined as never;
      const event = walletEvent();
      await idle.get(DataSource).transaction((manager) => appendToOutbox(manager, [event]));
      await new Promise((r) => setTimeout(r, 500));
      expect(receiver.at('/relay').filter((r) => r.rawBody.includes(event.entityId))).toHaveLength(0);
      const rows = await idle
        .get(DataSource)
        .query('SELECT p.id FROM outbox o JOIN outbox_pending p ON p.id = o.id WHERE o.entity_id = $1', [
          event.entityId,
        ]);
      expect(rows).toHaveLength(1); // still queued
    } finally {
      await idle.close();
    }
  });
});
