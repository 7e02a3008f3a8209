import { randomUUID } from 'node:crypto';
import type { WebhookEventPayload } from '@tessera/contracts';
import { Queue } from 'bullmq';
import { webhookEventJobs } from './outbox-relay';

/**
 * The relay's job ids (decision 0402). Relays claim outbox rows with SKIP LOCKED in created_at order, which is
 * not commit order, so a replay after a crash between enqueue and commit can start with the same event and
 * have the same size as the lost transaction's job yet hold other events. BullMQ silently drops a job whose
 * id it already holds, so such a replay must get its own id, and only a replay of the very same events may
 * share one.
 */
const REDIS_URL = process.env.TEST_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const event = (eventId: string): WebhookEventPayload => ({
  eventId,
  source: 'custody',
  tenantId: '00000000-0000-4000-8000-000000000001',
  eventType: 'transaction.completed',
  entityType: 'transaction',
  entityId: randomUUID(),
  sequence: 1,
  occurredAt: new Date(0).toISOString(),
  data: {},
});

describe('webhookEventJobs', () => {
  it('cuts events into jobs of at most 100, in order', () => {
    const events = Array.from({ length: 250 }, () => event(randomUUID()));
    const jobs = webhookEventJobs(events);
    expect(jobs.map((j) => j.payload.events.length)).toEqual([100, 100, 50]);
    expect(jobs.flatMap((j) => j.payload.events)).toEqual(events);
    expect(new Set(jobs.map((j) => j.jobId)).size).toBe(3);
  });

  it('gives the same events the same id, and a chunk with the same first event and size but other events another', () => {
    const [a, b, c, d] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const first = webhookEventJobs([a, b, c].map(event))[0]!.jobId;
    expect(webhookEventJobs([a, b, c].map(event))[0]!.jobId).toBe(first);
    expect(webhookEventJobs([a, b, d].map(event))[0]!.jobId).not.toBe(first);
    expect(webhookEventJobs([a, c, b].map(event))[0]!.jobId).not.toBe(first);
    expect(first.startsWith(`events-${a}-3-`)).toBe(true);
  });

  it('keeps every event of a replay cut differently in BullMQ, and deduplicates an identical replay', async () => {
    const queue = new Queue(`relay-ids-${randomUUID()}`, { connection: { url: REDIS_URL } as never });
    try {
      const [a, b, c, d] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
      const add = (ids: string[]) =>
        queue.addBulk(
          webhookEventJobs(ids.map(event)).map((j) => ({
            name: 'events',
            data: j.payload,
            opts: { jobId: j.jobId },
          })),
        );
      await add([a, b, c]); // the transaction that was lost after enqueuing
      await add([a, b, c]); // a replay of the same rows
      await add([a, b, d]); // a replay that the lock order cut differently
      const jobs = await queue.getJobs(['waiting'], 0, -1);
      expect(jobs).toHaveLength(2);
      const queued = new Set(
        jobs.flatMap((j) => (j.data as { events: WebhookEventPayload[] }).events.map((e) => e.eventId)),
      );
      expect([a, b, c, d].filter((id) => !queued.has(id))).toEqual([]);
    } finally {
      await queue.obliterate({ force: true });
      await queue.close();
    }
  });
});
