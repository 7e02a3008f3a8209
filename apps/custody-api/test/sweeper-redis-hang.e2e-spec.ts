import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { type TcpProxy, testRedisProxy } from '@tessera/testing';
import {
  ASSETS,
  bootWorker,
  client,
  type Client,
  createKey,
  createTenant,
  fundedWallet,
  type Harness,
  sql,
  startHarness,
} from './support';

// A worker stopped while its stuck-transaction sweep waits on a hung Redis (decision 0496). The sweep holds the
// sweep lock's database connection while it asks Redis for each stuck transaction's job; closing waited for it
// for as long as Redis hung. Now the pass is left: its transaction rolls back, the lock goes, the worker closes
// within seconds, and the transaction is still there, stuck, for the next worker's sweep. Real API, worker,
// Postgres and Redis; the hang is a held TCP proxy in front of the worker's Redis.

/** A sweep finds transactions untouched this long. */
const SWEEP_AFTER_MS = 4000;
/** What closing may take: the Redis probe's bound and the other closes, on a loaded 2-core machine. */
const PROMPT_MS = 6000;

let h: Harness;
let api: Client;
let proxy: TcpProxy;
let worker: NestFastifyApplication | undefined;

/**
 * Holders of the stuck-transaction sweep's advisory lock (`tessera:custody:stuck-sweep`, one int8 key) in this
 * suite's database: pg_locks lists every database's, and the sweeper suite beside this one takes the same key.
 */
const sweepLocks = async () =>
  Number(
    (
      await sql<{ n: string }>(
        h,
        `SELECT count(*) AS n FROM pg_locks
          WHERE locktype = 'advisory' AND granted
            AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
            AND ((classid::bigint << 32) | objid::bigint) = hashtext('tessera:custody:stuck-sweep')::bigint`,
      )
    )[0]!.n,
  );

beforeAll(async () => {
  h = await startHarness({}, { worker: false });
  api = client(h.api, await createKey(h.api, await createTenant(h.api)));
  proxy = await testRedisProxy();
}, 60_000);
afterAll(async () => {
  proxy?.release();
  await worker?.close();
  await proxy?.close();
  await h?.close();
});

it('a worker closing while its sweep waits on a hung Redis leaves the sweep and closes promptly', async () => {
  // A deposit whose first step was never queued (its outbox rows taken away): the sweep's to find.
  const wallet = await fundedWallet(api, ASSETS.BTC, undefined);
  const deposit = await api.post('/sandbox/deposits', { walletId: wallet.walletId, amount: '1' }).expect(201);
  const id: string = deposit.body.transactionId;
  await sql(h, `DELETE FROM outbox_pending`);
  worker = await bootWorker(h, {
    REDIS_URL: proxy.url('redis'),
    CUSTODY_SWEEP_INTERVAL_MS: '100',
    CUSTODY_SWEEP_AFTER_MS: String(SWEEP_AFTER_MS),
  });
  // The deposit's age counts from now: the worker's boot, however slow, is not part of it.
  const [touched] = await sql<{ id: string }>(
    h,
    `UPDATE transactions SET updated_at = now() WHERE id = $1 AND status = 'Submitted' RETURNING id`,
    [id],
  );
  expect(touched).toBeDefined();
  proxy.hold();
  // Once the deposit is old enough, a pass takes the sweep lock and waits on Redis for its job's state, holding
  // the lock (the passes before it, finding nothing, hold it for a few milliseconds).
  await new Promise((r) => setTimeout(r, SWEEP_AFTER_MS + 1000));
  for (let sample = 0; sample < 3; sample++) {
    expect(await sweepLocks()).toBe(1);
    await new Promise((r) => setTimeout(r, 200));
  }

  const started = Date.now();
  await worker.close();
  worker = undefined;
  expect(Date.now() - started).toBeLessThan(PROMPT_MS);
  expect(await sweepLocks()).toBe(0);
  const [row] = await sql<{ status: string }>(h, `SELECT status FROM transactions WHERE id = $1`, [id]);
  expect(row!.status).toBe('Submitted');
  proxy.release();
}, 60_000);
