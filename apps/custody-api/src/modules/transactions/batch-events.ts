import type { OutboxEvent } from '@tessera/platform';

/**
 * The outbox events of one group-committed batch of transactions (decision 0406): every event of every item in
 * arrival order, except that each balance gets one `balance.updated`, after the others. The batch commits as
 * one, so a balance that several of its transfers move changes once as any reader sees it, and the event is a
 * cache-invalidation signal without amounts (custody-api.md, event catalog): a second copy in the same commit
 * would tell the receiver nothing and cost a delivery. Events without `occurredAt` get `now`.
 */
export function batchEvents(
  items: { events: OutboxEvent[] }[],
  now: Date,
): (OutboxEvent & { occurredAt: Date })[] {
  const others: (OutboxEvent & { occurredAt: Date })[] = [];
  const balances = new Map<string, OutboxEvent & { occurredAt: Date }>();
  for (const e of items.flatMap((t) => t.events)) {
    const event = { ...e, occurredAt: e.occurredAt ?? now };
    if (e.eventType !== 'balance.updated') others.push(event);
    else if (!balances.has(`${e.tenantId}|${e.entityId}`)) balances.set(`${e.tenantId}|${e.entityId}`, event);
  }
  return [...others, ...balances.values()];
}
