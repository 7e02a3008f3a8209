import { batchEvents } from './batch-events';
import { balanceUpdatedEvent } from './transaction.record';

const created = (id: string) => ({
  tenantId: 't1',
  eventType: 'transaction.created',
  entityType: 'transaction',
  entityId: id,
  data: { id },
});

describe('batchEvents', () => {
  const now = new Date('2026-11-25T12:00:00Z');

  it('keeps every transaction event in arrival order and one balance.updated per balance, after them', () => {
    const items = [
      {
        events: [
          created('x1'),
          balanceUpdatedEvent('t1', 'va', 'btc'),
          balanceUpdatedEvent('t1', 'vb', 'btc'),
        ],
      },
      {
        events: [
          created('x2'),
          balanceUpdatedEvent('t1', 'vb', 'btc'),
          balanceUpdatedEvent('t1', 'vc', 'btc'),
        ],
      },
    ];
    const events = batchEvents(items, now);
    expect(events.map((e) => `${e.eventType} ${e.entityId}`)).toEqual([
      'transaction.created x1',
      'transaction.created x2',
      'balance.updated va:btc',
      'balance.updated vb:btc',
      'balance.updated vc:btc',
    ]);
    expect(events.every((e) => e.occurredAt === now)).toBe(true);
  });

  it('never merges the balances of two tenants, nor events of other types', () => {
    const items = [
      { events: [balanceUpdatedEvent('t1', 'va', 'btc'), created('x1')] },
      { events: [balanceUpdatedEvent('t2', 'va', 'btc'), created('x1')] },
    ];
    const events = batchEvents(items, now);
    expect(events.filter((e) => e.eventType === 'balance.updated').map((e) => e.tenantId)).toEqual([
      't1',
      't2',
    ]);
    expect(events.filter((e) => e.eventType === 'transaction.created')).toHaveLength(2);
  });

  it('keeps an event time that was set', () => {
    const at = new Date('2026-01-01T00:00:00Z');
    expect(batchEvents([{ events: [{ ...created('x1'), occurredAt: at }] }], now)[0]!.occurredAt).toBe(at);
  });
});
