import { until, untilTrue } from './polling';

describe('until', () => {
  it('answers the first value that makes done hold', async () => {
    let n = 0;
    await expect(
      until(
        () => ++n,
        (v) => v >= 3,
        { everyMs: 1 },
      ),
    ).resolves.toBe(3);
  });

  it('fails after ms, naming what it waited for and the last value', async () => {
    await expect(
      until(
        async () => ({ status: 'pending' }),
        () => false,
        { ms: 30, everyMs: 5, what: 'the sweep' },
      ),
    ).rejects.toThrow('Timed out after 30 ms waiting for the sweep; last value {"status":"pending"}');
  });

  it('passes a failing read on as it is', async () => {
    await expect(
      until(
        () => Promise.reject(new Error('boom')),
        () => true,
      ),
    ).rejects.toThrow('boom');
  });
});

describe('untilTrue', () => {
  it('waits until the check answers true', async () => {
    let n = 0;
    await expect(untilTrue(() => ++n === 2, 'the second call', { everyMs: 1 })).resolves.toBeUndefined();
    expect(n).toBe(2);
  });
});
