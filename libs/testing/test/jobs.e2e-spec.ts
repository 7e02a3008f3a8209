import { Injectable } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { JOBS, QUEUES, type WebhookEventPayload } from '@tessera/contracts';
import { bullPrefix, DEFAULT_JOB_OPTIONS, JobQueues, ProcessJob } from '@tessera/platform';
import { Queue, QueueEvents } from 'bullmq';
import Redis from 'ioredis';
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

describe('JobQueues.addBulk (one job without a pipeline, several in one)', () => {
  // A producer on a queue prefix no consumer reads, so every job stays where addBulk put it.
  const prefix = `addbulk-${randomUUID()}`;
  let redis: Redis;
  let queues: JobQueues;
  let queue: Queue;

  beforeAll(() => {
    redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
    queues = new JobQueues(redis, { service: 'test', env: { QUEUE_PREFIX: prefix } } as never);
    queue = new Queue(QUEUES.WEBHOOK_EVENTS, {
      connection: { url: TEST_REDIS_URL },
      prefix: bullPrefix(prefix),
    });
  });
  afterAll(async () => {
    await queue?.obliterate({ force: true });
    await queue?.close();
    await queues?.onModuleDestroy();
    redis?.disconnect();
  });

  const ids = async (state: 'waiting' | 'delayed') =>
    (await queue.getJobs([state], 0, -1)).map((j) => j.id).sort();

  it('one job: queued under its id with its payload; the same id again is dropped; a delay is kept', async () => {
    const payload = event();
    await queues.addBulk('WEBHOOK_EVENT', [{ payload, jobId: 'one-a' }]);
    await queues.addBulk('WEBHOOK_EVENT', [{ payload: event(), jobId: 'one-a' }]);
    await queues.addBulk('WEBHOOK_EVENT', [{ payload: event(), jobId: 'one-b', delayMs: 60_000 }]);
    expect(await ids('waiting')).toEqual(['one-a']);
    expect(await ids('delayed')).toEqual(['one-b']);
    const job = await queue.getJob('one-a');
    expect(job!.name).toBe(JOBS.WEBHOOK_EVENT.name);
    expect(job!.data).toEqual(payload);
    expect(job!.opts.attempts).toBe(DEFAULT_JOB_OPTIONS.attempts); // the queue's default job options apply on both paths
  });

  it('several jobs: all queued in one call, ids already held dropped', async () => {
    await queues.addBulk('WEBHOOK_EVENT', [
      { payload: event(), jobId: 'many-a' },
      { payload: event(), jobId: 'one-a' },
      { payload: event(), jobId: 'many-b' },
    ]);
    expect(await ids('waiting')).toEqual(['many-a', 'many-b', 'one-a']);
    expect((await queue.getJob('many-b'))!.opts.attempts).toBe(DEFAULT_JOB_OPTIONS.attempts);
  });

  it('checks every payload before it enqueues any, and an empty list enqueues nothing', async () => {
    await expect(
      queues.addBulk('WEBHOOK_EVENT', [
        { payload: event(), jobId: 'bad-a' },
        { payload: { ...event(), eventId: 'not-a-uuid' }, jobId: 'bad-b' },
      ]),
    ).rejects.toThrow(/invalid payload.*eventId/);
    await expect(
      queues.addBulk('WEBHOOK_EVENT', [{ payload: { ...event(), eventId: 'nope' }, jobId: 'bad-c' }]),
    ).rejects.toThrow(/invalid payload.*eventId/);
    await queues.addBulk('WEBHOOK_EVENT', []);
    expect(await ids('waiting')).toEqual(['many-a', 'many-b', 'one-a']);
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
