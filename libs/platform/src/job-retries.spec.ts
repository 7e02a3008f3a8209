import { randomUUID } from 'node:crypto';
import { Queue, QueueEvents, UnrecoverableError, Worker } from 'bullmq';
import { cappedBackoffMs, DEFAULT_JOB_OPTIONS, JOB_RETRY_MAX_DELAY_MS, WORKER_SETTINGS } from './jobs';

const REDIS_URL = process.env.TEST_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('job retries (decision 0438)', () => {
  it('doubles from the first delay, caps at a minute, with ±10 % jitter', () => {
    for (let i = 0; i < 50; i += 1) {
      expect(cappedBackoffMs(1, 1000)).toBeGreaterThanOrEqual(900);
      expect(cappedBackoffMs(1, 1000)).toBeLessThanOrEqual(1100);
      expect(cappedBackoffMs(4, 1000)).toBeGreaterThanOrEqual(7200);
      expect(cappedBackoffMs(4, 1000)).toBeLessThanOrEqual(8800);
      expect(cappedBackoffMs(30, 1000)).toBeLessThanOrEqual(JOB_RETRY_MAX_DELAY_MS * 1.1);
      expect(cappedBackoffMs(30, 1000)).toBeGreaterThanOrEqual(JOB_RETRY_MAX_DELAY_MS * 0.9);
    }
  });

  it('keeps retrying for about two weeks at the cap, not five attempts', () => {
    const attempts = DEFAULT_JOB_OPTIONS.attempts!;
    expect(attempts * JOB_RETRY_MAX_DELAY_MS).toBeGreaterThan(13 * 24 * 3600 * 1000);
    expect(DEFAULT_JOB_OPTIONS.backoff).toEqual({ type: 'capped-exponential', delay: 1000 });
  });

  it('a real worker runs a job that fails eight times until it passes; an unparseable one fails at once', async () => {
    const name = `retries-${randomUUID()}`;
    const connection = { url: REDIS_URL } as never;
    const queue = new Queue(name, { connection, defaultJobOptions: DEFAULT_JOB_OPTIONS });
    const events = new QueueEvents(name, { connection });
    const calls = new Map<string, number>();
    const worker = new Worker(
      name,
      async (job) => {
        const n = (calls.get(job.id!) ?? 0) + 1;
        calls.set(job.id!, n);
        if (job.name === 'poison') throw new UnrecoverableError('does not parse');
        if (n <= 8) throw new Error(`database away (${n})`);
        return n;
      },
      { connection, settings: WORKER_SETTINGS },
    );
    try {
      await events.waitUntilReady();
      // The back-off's first delay comes from the job: 5 ms here, so eight failures take well under a second.
      const flaky = await queue.add('flaky', {}, { backoff: { type: 'capped-exponential', delay: 5 } });
      expect(await flaky.waitUntilFinished(events, 30_000)).toBe(9);
      const poison = await queue.add('poison', {});
      await expect(poison.waitUntilFinished(events, 10_000)).rejects.toThrow('does not parse');
      expect(calls.get(poison.id!)).toBe(1);
    } finally {
      await worker.close();
      await events.close();
      await queue.obliterate({ force: true });
      await queue.close();
    }
  });
});
