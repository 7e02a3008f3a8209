import { randomUUID } from 'node:crypto';
import { assertJobCoverage, JobPayloadError, JOBS, parseJobPayload } from './jobs';
import { QUEUES } from './queues';

describe('job registry', () => {
  it('parses a valid payload and names the bad fields of an invalid one', () => {
    const ok = {
      eventId: randomUUID(),
      source: 'custody',
      tenantId: 't',
      eventType: 'wallet.created',
      entityType: 'wallet',
      entityId: 'w',
      occurredAt: new Date().toISOString(),
      data: {},
    };
    expect(parseJobPayload(JOBS.WEBHOOK_EVENT, ok)).toEqual(ok);
    expect(() => parseJobPayload(JOBS.WEBHOOK_EVENT, { ...ok, source: 'elsewhere', eventId: 1 })).toThrow(
      JobPayloadError,
    );
    expect(() => parseJobPayload(JOBS.WEBHOOK_EVENT, { ...ok, eventId: 'x' })).toThrow(/eventId/);
  });

  it('coverage check: exactly one processor per job of each consumed queue', () => {
    expect(() => assertJobCoverage([QUEUES.WEBHOOK_EVENTS], [JOBS.WEBHOOK_EVENT.name])).not.toThrow();
    expect(() => assertJobCoverage([QUEUES.WEBHOOK_EVENTS], [])).toThrow(/has no processor/);
    expect(() =>
      assertJobCoverage([QUEUES.WEBHOOK_EVENTS], [JOBS.WEBHOOK_EVENT.name, JOBS.WEBHOOK_EVENT.name]),
    ).toThrow(/has 2 processors/);
    expect(() => assertJobCoverage([], [JOBS.WEBHOOK_EVENT.name])).toThrow(/not consumed/);
    expect(() => assertJobCoverage([], ['ghost.v1'])).toThrow(/unknown job ghost\.v1/);
  });
});
