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
    const many = parseJobPayload(JOBS.WEBHOOK_EVENTS, { events: [ok, ok] });
    expect(many.events).toHaveLength(2);
    expect(() => parseJobPayload(JOBS.WEBHOOK_EVENTS, { events: [] })).toThrow(/events/);
    expect(() =>
      parseJobPayload(JOBS.WEBHOOK_EVENTS, { events: Array.from({ length: 101 }, () => ok) }),
    ).toThrow(/events/);
  });

  it('coverage check: exactly one processor per job of each consumed queue', () => {
    const both = [JOBS.WEBHOOK_EVENT.name, JOBS.WEBHOOK_EVENTS.name];
    expect(() => assertJobCoverage([QUEUES.WEBHOOK_EVENTS], both)).not.toThrow();
    expect(() => assertJobCoverage([QUEUES.WEBHOOK_EVENTS], [JOBS.WEBHOOK_EVENT.name])).toThrow(
      /webhook\.events\.v1 on queue webhook\.events has no processor/,
    );
    expect(() => assertJobCoverage([QUEUES.WEBHOOK_EVENTS], [])).toThrow(/has no processor/);
    expect(() =>
      assertJobCoverage([QUEUES.WEBHOOK_EVENTS], [JOBS.WEBHOOK_EVENT.name, JOBS.WEBHOOK_EVENT.name]),
    ).toThrow(/has 2 processors/);
    expect(() => assertJobCoverage([], [JOBS.WEBHOOK_EVENT.name])).toThrow(/not consumed/);
    expect(() => assertJobCoverage([], ['ghost.v1'])).toThrow(/unknown job ghost\.v1/);
  });
});
