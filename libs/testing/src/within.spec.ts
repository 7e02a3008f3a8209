import { within } from './within';

describe('within', () => {
  it('answers what the step answers when it is in time', async () => {
    await expect(within(1_000, 'a quick step', async () => 42)).resolves.toBe(42);
  });

  it('names the step that ran out of time', async () => {
    const never = () => new Promise<never>(() => undefined);
    await expect(within(20, 'booting the worker', never)).rejects.toThrow(
      'timed out after 20 ms: booting the worker',
    );
  });

  it('passes a failure of the step on as it is', async () => {
    await expect(within(1_000, 'a failing step', () => Promise.reject(new Error('boom')))).rejects.toThrow(
      'boom',
    );
  });
});
