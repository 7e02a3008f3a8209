import { type SequenceGap, SequenceReorderer } from './sequence-reorderer';
import type { WebhookEnvelope } from './webhook-verification';

interface Env {
  entityType: string;
  entityId: string;
  sequence?: number;
  tenantId?: string;
  n?: string;
}

const tx = (entityId: string, sequence: number, tenantId = 't1'): Env => ({
  entityType: 'transaction',
  entityId,
  sequence,
  tenantId,
  n: `${entityId}#${sequence}`,
});
const names = (list: Env[]) => list.map((e) => e.n);

describe('SequenceReorderer', () => {
  it('releases in order per entity, holding early ones back', () => {
    const r = new SequenceReorderer<Env>();
    expect(names(r.push(tx('a', 2)).released)).toEqual([]);
    expect(names(r.push(tx('b', 1)).released)).toEqual(['b#1']);
    expect(names(r.push(tx('a', 3)).released)).toEqual([]);
    expect(names(r.push(tx('a', 1)).released)).toEqual(['a#1', 'a#2', 'a#3']);
    expect(r.expected('t1|transaction|a')).toBe(4);
  });

  it('keeps entities of different tenants apart', () => {
    const r = new SequenceReorderer<Env>();
    expect(names(r.push(tx('a', 1, 't1')).released)).toEqual(['a#1']);
    expect(r.push(tx('a', 2, 't2')).released).toEqual([]);
    expect(names(r.push(tx('a', 1, 't2')).released)).toEqual(['a#1', 'a#2']);
  });

  it('drops duplicates, both already released and still held', () => {
    const dropped: Env[] = [];
    const r = new SequenceReorderer<Env>({ onDuplicate: (e) => dropped.push(e) });
    r.push(tx('a', 1));
    expect(r.push(tx('a', 1))).toEqual({ released: [], duplicate: true, gaps: [] });
    r.push(tx('a', 3));
    expect(r.push(tx('a', 3)).duplicate).toBe(true);
    expect(names(r.push(tx('a', 2)).released)).toEqual(['a#2', 'a#3']);
    expect(names(dropped)).toEqual(['a#1', 'a#3']);
  });

  it('reports a gap after the timeout, skips it and releases what it held; a late arrival is then a duplicate', () => {
    let now = 0;
    const gaps: SequenceGap[] = [];
    const released: Env[] = [];
    const r = new SequenceReorderer<Env>({
      gapTimeoutMs: 1000,
      now: () => now,
      onGap: (g) => gaps.push(g),
      onRelease: (e) => released.push(e),
    });
    r.push(tx('a', 1));
    r.push(tx('a', 4));
    r.push(tx('a', 5));
    now = 999;
    expect(r.checkTimeouts().gaps).toEqual([]);
    now = 1000;
    const result = r.checkTimeouts();
    expect(result.gaps).toEqual([
      {
        key: 't1|transaction|a',
        entityType: 'transaction',
        entityId: 'a',
        from: 2,
        to: 3,
        reason: 'timeout',
      },
    ]);
    expect(names(result.released)).toEqual(['a#4', 'a#5']);
    expect(names(released)).toEqual(['a#1', 'a#4', 'a#5']);
    expect(gaps).toHaveLength(1);
    expect(r.push(tx('a', 2)).duplicate).toBe(true);
  });

  it('restarts the gap clock when the front moves', () => {
    let now = 0;
    const r = new SequenceReorderer<Env>({ gapTimeoutMs: 1000, now: () => now });
    r.push(tx('a', 2));
    r.push(tx('a', 4));
    now = 900;
    expect(names(r.push(tx('a', 1)).released)).toEqual(['a#1', 'a#2']);
    now = 1500;
    expect(r.checkTimeouts().gaps).toEqual([]);
    now = 1900;
    expect(r.checkTimeouts().gaps.map((g) => [g.from, g.to])).toEqual([[3, 3]]);
  });

  it('gives up the oldest gap when too many wait behind it', () => {
    const r = new SequenceReorderer<Env>({ maxBuffered: 3 });
    for (const s of [3, 4, 5]) expect(r.push(tx('a', s)).released).toEqual([]);
    const result = r.push(tx('a', 6));
    expect(result.gaps).toEqual([expect.objectContaining({ from: 1, to: 2, reason: 'buffer-limit' })]);
    expect(names(result.released)).toEqual(['a#3', 'a#4', 'a#5', 'a#6']);
  });

  it("with gaps 'skip' (a partial subscription) releases each newer number at once, drops older ones, never waits", () => {
    let now = 0;
    const gaps: SequenceGap[] = [];
    const dropped: Env[] = [];
    const r = new SequenceReorderer<Env>({
      gaps: 'skip',
      gapTimeoutMs: 1000,
      now: () => now,
      onGap: (g) => gaps.push(g),
      onDuplicate: (e) => dropped.push(e),
    });
    // Subscribed to status updates only: numbers 2 and 5 of the transaction; 1, 3 and 4 were other types.
    expect(names(r.push(tx('a', 2)).released)).toEqual(['a#2']);
    expect(names(r.push(tx('a', 5)).released)).toEqual(['a#5']);
    expect(r.expected('t1|transaction|a')).toBe(6);
    // A late, older event (a retry that lost the race) is not applied over a newer one.
    expect(r.push(tx('a', 4))).toEqual({ released: [], duplicate: true, gaps: [] });
    expect(r.push(tx('a', 5)).duplicate).toBe(true);
    now = 10_000;
    expect(r.checkTimeouts()).toEqual({ released: [], duplicate: false, gaps: [] });
    expect(gaps).toEqual([]);
    expect(names(dropped)).toEqual(['a#4', 'a#5']);
    expect(r.heldCounts()).toEqual({ 't1|transaction|a': 0 });
    // The same stream in the default mode would hold a#2 for the missing 1.
    expect(new SequenceReorderer<Env>().push(tx('a', 2)).released).toEqual([]);
  });

  it('resumes an entity after the last sequence processed before a restart', () => {
    const r = new SequenceReorderer<Env>();
    r.resume({ entityType: 'transaction', entityId: 'a', tenantId: 't1' }, 7);
    expect(r.push(tx('a', 7)).duplicate).toBe(true);
    expect(r.push(tx('a', 9)).released).toEqual([]);
    expect(names(r.push(tx('a', 8)).released)).toEqual(['a#8', 'a#9']);
  });

  it('resumes an entity of delivered envelopes, which carry no tenantId, when resumed without one', () => {
    const r = new SequenceReorderer<Env>();
    const delivered = (sequence: number): Env => ({ entityType: 'transaction', entityId: 'b', sequence });
    r.resume({ entityType: 'transaction', entityId: 'b' }, 4);
    expect(r.push(delivered(4)).duplicate).toBe(true);
    expect(r.push(delivered(5)).released).toHaveLength(1);
  });

  it('passes envelopes without a sequence straight through, and refuses a malformed one', () => {
    const r = new SequenceReorderer<Env>();
    expect(r.push({ entityType: 'wallet', entityId: 'w' }).released).toHaveLength(1);
    expect(() => r.push({ entityType: 'wallet', entityId: 'w', sequence: 1.5 })).toThrow(TypeError);
  });

  it('releases a shuffled stream of many entities exactly once each, in order', () => {
    const envelopes: Env[] = [];
    for (const id of ['a', 'b', 'c', 'd']) for (let s = 1; s <= 50; s++) envelopes.push(tx(id, s));
    const withDuplicates = [...envelopes, ...envelopes.filter((_, i) => i % 7 === 0)];
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = withDuplicates.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [withDuplicates[i], withDuplicates[j]] = [withDuplicates[j], withDuplicates[i]];
    }
    const r = new SequenceReorderer<Env>();
    const out = withDuplicates.flatMap((e) => r.push(e).released);
    expect(out).toHaveLength(200);
    for (const id of ['a', 'b', 'c', 'd'])
      expect(out.filter((e) => e.entityId === id).map((e) => e.sequence)).toEqual(
        Array.from({ length: 50 }, (_, i) => i + 1),
      );
  });
});

describe('SequenceReorderer with verified webhook envelopes', () => {
  it('accepts the envelope type constructWebhookEvent returns', () => {
    const r = new SequenceReorderer<WebhookEnvelope>();
    const envelope: WebhookEnvelope = {
      eventType: 'transaction.status.updated',
      entityType: 'transaction',
      entityId: 'tx-1',
      timestamp: '2026-11-23T00:00:00.000Z',
      data: { status: 'Completed' },
      sequence: 1,
    };
    expect(r.push(envelope).released).toEqual([envelope]);
  });
});
