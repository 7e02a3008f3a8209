import { setTimeout as sleep } from 'node:timers/promises';
import { PacedTask } from './paced-task';

/** A task that records each call's start (performance.now()) and takes `ms` to finish. */
function recordingTask(ms: number) {
  const starts: number[] = [];
  let idle = 0;
  const task = new PacedTask(
    async () => {
      starts.push(performance.now());
      await sleep(ms);
    },
    () => (idle += 1),
  );
  return { task, starts, idled: () => idle };
}

describe('PacedTask (the relay passes and NOTIFYs of decisions 0418, 0419)', () => {
  it('starts the first request at once and folds the requests made during a call into one more call', async () => {
    const { task, starts, idled } = recordingTask(50);
    const t0 = performance.now();
    for (let i = 0; i < 20; i++) task.request(0);
    expect(starts).toHaveLength(1); // synchronously started
    expect(starts[0]! - t0).toBeLessThan(20);
    await sleep(200);
    expect(starts).toHaveLength(2); // the 19 requests made during the first call: one follow-up
    expect(idled()).toBe(1); // afterRun once, when no request was left waiting
    await task.stop();
  });

  it('starts at most one call per interval, and one after the last request', async () => {
    const { task, starts } = recordingTask(1);
    const end = performance.now() + 600;
    let last = 0;
    while (performance.now() < end) {
      task.request(200);
      last = performance.now();
      await sleep(5);
    }
    await sleep(300);
    expect(starts.length).toBeGreaterThanOrEqual(3);
    expect(starts.length).toBeLessThanOrEqual(5); // not one per request (about 120 of them)
    for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(195);
    expect(starts.at(-1)!).toBeGreaterThanOrEqual(last - 1); // the last request is covered by a call
    await task.stop();
  });

  it('stop waits for the call in flight and takes no more requests', async () => {
    const { task, starts, idled } = recordingTask(50);
    task.request(0);
    task.request(0); // would be the follow-up
    await task.stop();
    task.request(0);
    await sleep(80);
    expect(starts).toHaveLength(1);
    expect(idled()).toBe(0);
  });
});
