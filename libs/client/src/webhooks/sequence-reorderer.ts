/**
 * Puts webhook envelopes back in order per entity. Each envelope carries `sequence`, an integer that
 * increases by one per (tenant, entityType, entityId) (issue 17); delivery is at-least-once and unordered.
 * The reorderer releases envelopes of one entity in sequence order, holds early ones back, drops duplicates
 * and already-released numbers, and reports a gap when a missing number does not arrive within
 * `gapTimeoutMs` or when more than `maxBuffered` envelopes of one entity wait behind it; it then skips the
 * missing numbers and releases what it holds. It keeps its state in memory: after a restart, `resume()` each
 * entity from your store (the last sequence you processed), or the first envelope seen starts the entity at
 * `firstSequence`. An endpoint subscribed to some event types only sees gaps that never fill (the numbers of
 * the types it left out): give it `gaps: 'skip'`, which releases in increasing order and waits for nothing.
 */
export interface SequencedEnvelope {
  entityType: string;
  entityId: string;
  /** Absent on envelopes from a server without ordered webhooks: released at once, unordered. */
  sequence?: number;
  tenantId?: string;
}

export interface SequenceGap {
  key: string;
  entityType: string;
  entityId: string;
  /** First and last missing sequence (inclusive). */
  from: number;
  to: number;
  reason: 'timeout' | 'buffer-limit';
}

export interface ReorderResult<E> {
  /** Envelopes now ready, in order (possibly from earlier pushes). */
  released: E[];
  /** True when the pushed envelope was a duplicate or older than what was already released, and dropped. */
  duplicate: boolean;
  gaps: SequenceGap[];
}

export interface SequenceReordererOptions<E extends SequencedEnvelope> {
  /**
   * `wait` (default): a missing number is awaited, for an endpoint subscribed to every event type, where each
   * number comes. `skip`: for an endpoint subscribed to some types only (`subscribedEventTypes`), which never
   * receives the numbers of the types it left out: an envelope above the last released number is released at
   * once, and one at or below it is dropped as a duplicate (late and older than what was applied). Nothing is
   * held and no gap is reported.
   */
  gaps?: 'wait' | 'skip';
  /** How long a missing number is awaited before it is reported and skipped (default 30000 ms). */
  gapTimeoutMs?: number;
  /** Envelopes held per entity before the oldest missing number is given up (default 1000). */
  maxBuffered?: number;
  /** The number an entity's first envelope has (default 1). */
  firstSequence?: number;
  /** Called with every released envelope, in order. */
  onRelease?: (envelope: E) => void;
  /** Called with every gap given up on. */
  onGap?: (gap: SequenceGap) => void;
  /** Called with every dropped duplicate. */
  onDuplicate?: (envelope: E) => void;
  /** Entity key (default `tenantId|entityType|entityId`). */
  keyOf?: (envelope: E) => string;
  /** Clock in ms (default Date.now). */
  now?: () => number;
}

interface EntityState<E> {
  entityType: string;
  entityId: string;
  next: number;
  held: Map<number, E>;
  /** When the oldest still-missing number started being awaited. */
  waitingSince?: number;
}

export class SequenceReorderer<E extends SequencedEnvelope> {
  private readonly entities = new Map<string, EntityState<E>>();
  private readonly gapTimeoutMs: number;
  private readonly maxBuffered: number;
  private readonly firstSequence: number;
  private readonly now: () => number;
  private readonly keyOf: (envelope: E) => string;

  constructor(private readonly options: SequenceReordererOptions<E> = {}) {
    this.gapTimeoutMs = options.gapTimeoutMs ?? 30_000;
    this.maxBuffered = options.maxBuffered ?? 1000;
    this.firstSequence = options.firstSequence ?? 1;
    this.now = options.now ?? Date.now;
    this.keyOf = options.keyOf ?? ((e) => `${e.tenantId ?? ''}|${e.entityType}|${e.entityId}`);
    if (this.maxBuffered < 1) throw new TypeError('maxBuffered must be at least 1');
  }

  /** Continue an entity after `lastReleased` (e.g. the last sequence your store processed before a restart). */
  resume(envelope: Pick<E, 'entityType' | 'entityId' | 'tenantId'>, lastReleased: number): void {
    const key = this.keyOf(envelope as E);
    this.entities.set(key, {
      entityType: envelope.entityType,
      entityId: envelope.entityId,
      next: lastReleased + 1,
      held: new Map(),
    });
  }

  push(envelope: E): ReorderResult<E> {
    const result: ReorderResult<E> = { released: [], duplicate: false, gaps: [] };
    const sequence = envelope.sequence;
    if (sequence === undefined || sequence === null) {
      this.release(envelope, result);
      return result;
    }
    if (!Number.isSafeInteger(sequence) || sequence < 0)
      throw new TypeError(`sequence must be a non-negative integer, got ${String(sequence)}`);
    const key = this.keyOf(envelope);
    let state = this.entities.get(key);
    if (!state) {
      state = {
        entityType: envelope.entityType,
        entityId: envelope.entityId,
        next: this.firstSequence,
        held: new Map(),
      };
      this.entities.set(key, state);
    }
    if (sequence < state.next || state.held.has(sequence)) {
      result.duplicate = true;
      this.options.onDuplicate?.(envelope);
      return result;
    }
    if (this.options.gaps === 'skip') {
      state.next = sequence + 1;
      this.release(envelope, result);
      return result;
    }
    state.held.set(sequence, envelope);
    this.drain(state, result);
    if (state.held.size > this.maxBuffered) this.skipGap(key, state, 'buffer-limit', result);
    this.expire(key, state, result);
    return result;
  }

  /** Reports and skips every gap awaited longer than `gapTimeoutMs`. Call it on a timer (or see `start`). */
  checkTimeouts(): ReorderResult<E> {
    const result: ReorderResult<E> = { released: [], duplicate: false, gaps: [] };
    for (const [key, state] of this.entities) this.expire(key, state, result);
    return result;
  }

  /** Runs `checkTimeouts` every `intervalMs` on an unref'd timer; returns the function that stops it. */
  start(intervalMs = Math.max(100, Math.floor(this.gapTimeoutMs / 4))): () => void {
    const timer = setInterval(() => this.checkTimeouts(), intervalMs);
    timer.unref?.();
    return () => clearInterval(timer);
  }

  /** Envelopes held back, per entity key (for metrics). */
  heldCounts(): Record<string, number> {
    return Object.fromEntries([...this.entities].map(([key, s]) => [key, s.held.size]));
  }

  /** The next sequence awaited for an entity key, or undefined when the entity is unknown. */
  expected(key: string): number | undefined {
    return this.entities.get(key)?.next;
  }

  /** Forgets an entity (e.g. after its final event), freeing its state. */
  forget(key: string): void {
    this.entities.delete(key);
  }

  private release(envelope: E, result: ReorderResult<E>): void {
    result.released.push(envelope);
    this.options.onRelease?.(envelope);
  }

  private drain(state: EntityState<E>, result: ReorderResult<E>): void {
    let moved = false;
    for (let e = state.held.get(state.next); e !== undefined; e = state.held.get(state.next)) {
      state.held.delete(state.next);
      state.next++;
      moved = true;
      this.release(e, result);
    }
    // The clock runs for the oldest missing number: it restarts whenever the front moves.
    if (state.held.size === 0) state.waitingSince = undefined;
    else if (moved || state.waitingSince === undefined) state.waitingSince = this.now();
  }

  private expire(key: string, state: EntityState<E>, result: ReorderResult<E>): void {
    while (state.waitingSince !== undefined && this.now() - state.waitingSince >= this.gapTimeoutMs)
      this.skipGap(key, state, 'timeout', result);
  }

  /** Gives up the numbers before the lowest held one, reports them, and releases what follows. */
  private skipGap(
    key: string,
    state: EntityState<E>,
    reason: SequenceGap['reason'],
    result: ReorderResult<E>,
  ) {
    if (state.held.size === 0) return;
    const lowest = Math.min(...state.held.keys());
    const gap: SequenceGap = {
      key,
      entityType: state.entityType,
      entityId: state.entityId,
      from: state.next,
      to: lowest - 1,
      reason,
    };
    result.gaps.push(gap);
    this.options.onGap?.(gap);
    state.next = lowest;
    // The clock restarts for the next missing number, if any.
    state.waitingSince = undefined;
    this.drain(state, result);
  }
}
