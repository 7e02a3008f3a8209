import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { JOBS } from '@tessera/contracts';
import { JobQueues } from '@tessera/platform';
import type { Queue } from 'bullmq';
import { advanceJobId } from '../src/modules/transactions/advance-enqueuer';
import {
  ASSETS,
  client,
  type Client,
  createKey,
  createTenant,
  fundedWallet,
  type Harness,
  sql,
  startHarness,
  waitFor,
  bootWorker,
} from './support';

let h: Harness;
let api: Client;
let queue: Queue;
let worker: NestFastifyApplication | undefined;

beforeAll(async () => {
  h = await startHarness({}, { worker: false });
  api = client(h.api, await createKey(h.api, await createTenant(h.api)));
  queue = h.api.get(JobQueues, { strict: false }).queue(JOBS.CUSTODY_TRANSACTION_ADVANCE.queue);
});
afterAll(async () => {
  await worker?.close();
  await h?.close();
});

it('the API role queues nothing on create; the worker relay starts the machine from transaction.created', async () => {
  const w = await fundedWallet(api, ASSETS.BTC, undefined);
  const created = await api.post('/sandbox/deposits', { walletId: w.walletId, amount: '0.5' }).expect(201);
  const id: string = created.body.transactionId;
  expect(await queue.getJobState(advanceJobId(id, 'Submitted'))).toBe('unknown');
  expect(
    await sql(h, `SELECT 1 FROM outbox WHERE event_type = 'transaction.created' AND entity_id = $1`, [id]),
  ).toHaveLength(1);

  worker = await bootWorker(h);
  await waitFor(
    () => api.get(`/transactions/${id}`).then((r) => r.body.status as string),
    (s) => s === 'Completed',
  );
  expect((await api.get(`/wallets/${w.walletId}/balance`)).body).toMatchObject({
    total: '0.5',
    available: '0.5',
  });
  const [row] = await sql<{ relayed: boolean }>(
    h,
    `SELECT NOT EXISTS (SELECT 1 FROM outbox_pending p WHERE p.id = o.id) AS relayed
       FROM outbox o WHERE event_type = 'transaction.created' AND entity_id = $1`,
    [id],
  );
  expect(row).toEqual({ relayed: true });
});

it('with the relay off, a new transaction stays Submitted (the relay is what starts it)', async () => {
  await worker?.close();
  worker = await bootWorker(h, { OUTBOX_RELAY_ENABLED: 'false', CUSTODY_SWEEP_INTERVAL_MS: '0' });
  const w = await fundedWallet(api, ASSETS.BTC, undefined);
  const created = await api.post('/sandbox/deposits', { walletId: w.walletId, amount: '0.5' }).expect(201);
  await new Promise((r) => setTimeout(r, 500));
  expect((await api.get(`/transactions/${created.body.transactionId}`)).body.status).toBe('Submitted');
});
