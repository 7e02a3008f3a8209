import { RepeatingTask } from './repeating-task';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('RepeatingTask', () => {
  it('runs every interval after the last run ended, goes on after a failure, and stop waits for a run', async () => {
    const errors: string[] = [];
    let runs = 0;
    let inRun = 0;
    let most = 0;
    const task = new RepeatingTask(
      10,
      async () => {
        runs += 1;
        inRun += 1;
        most = Math.max(most, inRun);
        await sleep(30);
        inRun -= 1;
        if (runs === 1) throw new Error('first run fails');
      },
      (err) => errors.push(err.message),
    );
    task.start();
    await sleep(150);
    expect(runs).toBeGreaterThanOrEqual(2);
    expect(most).toBe(1);
    expect(errors).toEqual(['first run fails']);
    await task.stop();
    expect(task.stopped).toBe(true);
    expect(inRun).toBe(0); // stop waited for the run in progress
    const after = runs;
    await sleep(60);
    expect(runs).toBe(after);
  });

  it('an interval of 0 never runs', async () => {
    let runs = 0;
    const task = new RepeatingTask(
      0,
      async () => void (runs += 1),
      () => undefined,
    );
    task.start();
    await sleep(30);
    expect(runs).toBe(0);
    await task.stop();
  });
});
