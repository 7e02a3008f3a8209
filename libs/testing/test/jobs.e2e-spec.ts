import { Injectable } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { JOBS, QUEUES, type WebhookEventPayload } from '@tessera/contracts';
import { bullPrefix, JobQueues, ProcessJob } from '@tessera/platform';
import { Queue, QueueEvents } from 'bullmq';
import { randomUUID } from 'node:crypto';
import { bootApp, createTestEnvironment, TEST_REDIS_URL, type TestEnvironment } from '../src';
import { fixtureMigrator, FixtureModule, FixtureProcessor } from './fixture/fixture';

let env: TestEnvironment;

beforeAll(async () => {
  env = await createTestEnvironment([fixtureMigrator]);
});
afterAll(async () => env?.teardown());
beforeEach(() => {
  FixtureProcessor.seen.length = 0;
  FixtureProcessor.delayMs = 0;
});

const event = (): WebhookEventPayload => ({
  eventId: randomUUID(),
  source: 'custody',
  tenantId: 't1',
  eventType: 'wallet.created',
  entityType: 'wallet',
  entityId: randomUUID(),
  occurredAt: new Date().toISOString(),
  data: { status: 'Active' },
});

const consumer = () =>
  FixtureModule.forRoot(env.env, { consumes: [QUEUES.WEBHOOK_EVENTS], processors: [FixtureProcessor] });

describe('job payload schemas', () => {
  let app: NestFastifyApplication;
  let queue: Queue;
  let events: QueueEvents;

  beforeAll(async () => {
    app = await bootApp(consumer(), { rpc: false });
    const connection = { url: TEST_REDIS_URL };
    queue = new Queue(QUEUES.WEBHOOK_EVENTS, { connection, prefix: bullPrefix(env.redis.prefix) });
    events = new QueueEvents(QUEUES.WEBHOOK_EVENTS, { connection, prefix: bullPrefix(env.redis.prefix) });
    await events.waitUntilReady();
  });
  afterAll(async () => {
    await events?.close();
    await queue?.close();
    await app?.close();
  });

  it('processes a valid job', async () => {
    const payload = event();
    await app.get(JobQueues).add('WEBHOOK_EVENT', payload);
    await waitFor(() => FixtureProcessor.seen.length === 1);
    expect(FixtureProcessor.seen[0].eventId).toBe(payload.eventId);
  });

  it('the producer refuses to enqueue a payload that fails its schema', async () => {
    await expect(
      app.get(JobQueues).add('WEBHOOK_EVENT', { ...event(), eventId: 'not-a-uuid' }),
    ).rejects.toThrow(/invalid payload.*eventId/);
  });

  it('a job whose payload fails its schema is failed once and dead-lettered, never retried', async () => {
    const job = await queue.add(
      JOBS.WEBHOOK_EVENT.name,
      { eventId: 'nope' },
      { attempts: 5, backoff: { type: 'fixed', delay: 10 } },
    );
    await expect(job.waitUntilFinished(events, 10_000)).rejects.toThrow(/invalid payload/);
    const failed = await queue.getJob(job.id!);
    expect(await failed!.getState()).toBe('failed');
    expect(failed!.attemptsMade).toBe(1);
    expect(FixtureProcessor.seen).toHaveLength(0);
  });
});

describe('startup check: each job of a consumed queue has exactly one processor', () => {
  it('fails the boot when a job has no processor', async () => {
    await expect(
      bootApp(FixtureModule.forRoot(env.env, { consumes: [QUEUES.WEBHOOK_EVENTS] }), { rpc: false }),
    ).rejects.toThrow(/webhook\.event\.v1 on queue webhook\.events has no processor/);
  });

  it('fails the boot when a job has two processors', async () => {
    @Injectable()
    class SecondProcessor {
      @ProcessJob(JOBS.WEBHOOK_EVENT)
      async handle(): Promise<void> {}
    }
    await expect(
      bootApp(
        FixtureModule.forRoot(env.env, {
          consumes: [QUEUES.WEBHOOK_EVENTS],
          processors: [FixtureProcessor, SecondProcessor],
        }),
        { rpc: false },
      ),
    ).rejects.toThrow(/has 2 processors/);
  });
});

describe('graceful shutdown', () => {
  it('drains: a job in progress when the app closes still completes', async () => {
    FixtureProcessor.delayMs = 700;
    const app = await bootApp(consumer(), { rpc: false });
    await app.get(JobQueues).add('WEBHOOK_EVENT', event());
    const queue = new Queue(QUEUES.WEBHOOK_EVENTS, {
      connection: { url: TEST_REDIS_URL },
      prefix: bullPrefix(env.redis.prefix),
    });
    await waitFor(async () => (await queue.getActiveCount()) === 1);
    await app.close();
    expect(FixtureProcessor.seen).toHaveLength(1);
    await queue.close();
  });
});

async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
