import type {
  DataSource,
  EntitySubscriberInterface,
  QueryRunner,
  TransactionCommitEvent,
  TransactionRollbackEvent,
} from 'typeorm';
import { PacedTask } from './paced-task';

/**
 * Wakes the outbox relay after a commit that wrote outbox rows (docs/decisions/0403).
 *
 * Producers used to wake it with a NOTIFY from a trigger on the outbox table. A transaction that NOTIFYs takes
 * Postgres' one cluster-wide notify lock at commit and holds it through its WAL flush, so every producing
 * commit waited for the one before it and none could share a flush (pgbench, 10 clients: about 24,000 INSERT
 * commits/s plain, 7,000/s with the trigger; decision 0403). Now the commit carries no NOTIFY: after it, the producer calls
 * `wakeOutboxRelay`, which
 * - runs the relay in this process directly when one is registered on the same DataSource, or else
 * - sends `pg_notify` on the schema's channel in its own statement, one at a time per DataSource: wakes asked
 *   for while one is in flight are folded into a single follow-up, so under load the notifies stay off the
 *   producers' commits and few. A busy producer sends at most one per OUTBOX_RELAY_MIN_INTERVAL_MS
 *   (`paceOutboxWakes`, decision 0419): the relay it wakes starts a pass at most that often anyway (0418).
 * A wake is a hint: a lost one (a crash right after commit, a raw INSERT that calls nothing) waits for the
 * relay's backstop poll, and nothing is lost.
 */

/** The LISTEN/NOTIFY channel on which a schema's outbox relay listens for wakes. */
export function outboxChannel(schema: string): string {
  return `tessera_outbox_${schema}`;
}

const localRelays = new WeakMap<DataSource, () => void>();
const notifiers = new WeakMap<DataSource, Map<string, PacedTask>>();
const wakePace = new WeakMap<DataSource, number>();

/**
 * A busy producer on this DataSource sends the relay's NOTIFY at most once per `minIntervalMs` (decision 0419);
 * the first wake after a quiet interval goes at once. PlatformModule sets it from OUTBOX_RELAY_MIN_INTERVAL_MS,
 * the interval at which the woken relay paces its passes, so pacing the wakes too adds no wait the relay's own
 * pacing did not already impose. Unset: one NOTIFY at a time, with no interval.
 */
export function paceOutboxWakes(dataSource: DataSource, minIntervalMs: number): void {
  wakePace.set(dataSource, minIntervalMs);
}

/** Called by OutboxRelay: wakes on this DataSource run it directly. Returns the unregister function. */
export function registerLocalOutboxRelay(dataSource: DataSource, wake: () => void): () => void {
  localRelays.set(dataSource, wake);
  return () => {
    if (localRelays.get(dataSource) === wake) localRelays.delete(dataSource);
  };
}

/** Wakes the relay of this DataSource's schema; call it after a commit that wrote outbox rows. */
export function wakeOutboxRelay(dataSource: DataSource): void {
  const local = localRelays.get(dataSource);
  if (local) {
    local();
    return;
  }
  notifyChannel(
    dataSource,
    outboxChannel(String((dataSource.options as { schema?: string }).schema ?? 'public')),
    wakePace.get(dataSource) ?? 0,
  );
}

/**
 * Wakes whoever LISTENs on `channel`, after the commit that gave them work: a `pg_notify` in its own statement,
 * one at a time per DataSource and channel, with the wakes asked for while one is in flight folded into one
 * follow-up, and, with `minIntervalMs`, at most one started per interval (the wakes asked for within it are
 * folded into one at its end). Never inside a producing transaction (see above). A wake that fails is dropped:
 * the listener's poll is the backstop.
 */
export function notifyChannel(dataSource: DataSource, channel: string, minIntervalMs = 0): void {
  let byChannel = notifiers.get(dataSource);
  if (!byChannel) {
    byChannel = new Map();
    notifiers.set(dataSource, byChannel);
  }
  let sends = byChannel.get(channel);
  if (!sends) {
    // One NOTIFY at a time: a commit that finished after the in-flight one went out may not be visible to the
    // listener run it starts, so the wakes asked for meanwhile are folded into one follow-up.
    sends = new PacedTask(() => sendNotify(dataSource, channel));
    byChannel.set(channel, sends);
  }
  sends.request(minIntervalMs);
}

/** One NOTIFY; a failed one is dropped (the listener's poll is the backstop: it costs latency, never work). */
async function sendNotify(dataSource: DataSource, channel: string): Promise<void> {
  if (!dataSource.isInitialized) return;
  await dataSource.query('SELECT pg_notify($1, $2)', [channel, '']).catch(() => undefined);
}

const PENDING = 'tesseraOutboxWake';

/**
 * Marks the transaction on this query runner as one that wrote outbox rows: OutboxWakeSubscriber wakes the
 * relay once it commits. Outside a transaction the insert has already committed, so this wakes at once.
 */
export function wakeOutboxRelayAfterCommit(
  dataSource: DataSource,
  queryRunner: QueryRunner | undefined,
): void {
  if (queryRunner?.isTransactionActive) {
    ensureOutboxWakeSubscriber(dataSource);
    queryRunner.data[PENDING] = true;
  } else {
    wakeOutboxRelay(dataSource);
  }
}

/** Wakes the relay when the outermost transaction that wrote outbox rows commits (a savepoint is not one). */
export class OutboxWakeSubscriber implements EntitySubscriberInterface {
  afterTransactionCommit(event: TransactionCommitEvent): void {
    const runner = event.queryRunner;
    if (runner.isTransactionActive || !runner.data[PENDING]) return;
    delete runner.data[PENDING];
    wakeOutboxRelay(event.connection);
  }

  afterTransactionRollback(event: TransactionRollbackEvent): void {
    if (!event.queryRunner.isTransactionActive) delete event.queryRunner.data[PENDING];
  }
}

/** Services list OutboxWakeSubscriber in their DataSource options; any other DataSource gets it here. */
function ensureOutboxWakeSubscriber(dataSource: DataSource): void {
  if (!dataSource.subscribers.some((s) => s instanceof OutboxWakeSubscriber)) {
    dataSource.subscribers.push(new OutboxWakeSubscriber());
  }
}
