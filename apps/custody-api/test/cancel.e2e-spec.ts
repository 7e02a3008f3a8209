import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { JOBS, transactionStatusUpdatedData } from '@tessera/contracts';
import { bootApp } from '@tessera/testing';
import { JobQueues } from '@tessera/platform';
import { loadEnv } from '../src/config/env';
import { CHAIN_ADAPTER, type ChainAdapter } from '../src/modules/chain/chain-adapter';
import { WorkerModule } from '../src/worker.module';
import {
  ASSETS,
  client,
  type Client,
  createKey,
  createTenant,
  creditedWallet as creditedWalletFor,
  fundedWallet,
  type Harness,
  newIdempotencyKey,
  sql,
  startHarness,
  waitFor,
} from './support';

const BOOK_ADDRESS = 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx';
const TERMINAL = ['Completed', 'Failed', 'Cancelled'];

let h: Harness;
let tenantId: string;
let api: Client;
let worker: NestFastifyApplication | undefined;

beforeAll(async () => {
  // The worker starts later (see "with the worker running"): until then transactions stay where the test puts
  // them.
  h = await startHarness({}, { worker: false });
  tenantId = await createTenant(h.api);
  api = client(h.api, await createKey(h.api, tenantId));
  await api.post('/address-book', { assetId: ASSETS.BTC, address: BOOK_ADDRESS, label: 'Cold' }).expect(201);
});
afterAll(async () => {
  await worker?.close();
  await h?.close();
});

const creditedWallet = (amount: string) => creditedWalletFor(h, api, amount);

const withdraw = (walletId: string, amount: string, as: Client = api) =>
  as.post(
    '/transactions/withdraw',
    { sourceWalletId: walletId, destinationAddress: BOOK_ADDRESS, amount },
    { 'idempotency-key': newIdempotencyKey() },
  );

const statusEvents = (id: string) =>
  sql<{ data: Record<string, unknown> }>(
    h,
    `SELECT data FROM outbox WHERE event_type = 'transaction.status.updated' AND entity_id = $1
     ORDER BY created_at, occurred_at`,
    [id],
  );

/** The wallet's balance row next to the sums of its ledger entries (they must always agree). */
async function ledgerAndBalance(walletId: string) {
  const [row] = await sql<Record<string, string>>(
    h,
    `SELECT b.total::text, b.available::text, b.locked::text, b.pending::text,
            COALESCE(sum(e.total_delta), 0)::text AS "sumTotal",
            COALESCE(sum(e.available_delta), 0)::text AS "sumAvailable",
            COALESCE(sum(e.locked_delta), 0)::text AS "sumLocked",
            COALESCE(sum(e.pending_delta), 0)::text AS "sumPending"
     FROM balances b LEFT JOIN ledger_entries e ON e.wallet_id = b.wallet_id
     WHERE b.wallet_id = $1 GROUP BY b.wallet_id, b.total, b.available, b.locked, b.pending`,
    [walletId],
  );
  expect([row.sumTotal, row.sumAvailable, row.sumLocked, row.sumPending]).toEqual([
    row.total,
    row.available,
    row.locked,
    row.pending,
  ]);
  return row;
}

const setStatus = (id: string, status: string) =>
  sql(h, `UPDATE transactions SET status = $2 WHERE id = $1`, [id, status]);

describe('cancel (no worker)', () => {
  it('cancels a Submitted withdrawal: hold released, ledger = balance, status event with previousStatus', async () => {
    const w = await creditedWallet('2');
    const tx = (await withdraw(w.walletId, '0.75').expect(201)).body;
    expect((await api.get(`/wallets/${w.walletId}/balance`)).body).toMatchObject({
      available: '1.25',
      locked: '0.75',
    });
    const res = await api.post(`/transactions/${tx.transactionId}/cancel`).expect(200);
    expect(res.body).toMatchObject({
      transactionId: tx.transactionId,
      type: 'Withdrawal',
      status: 'Cancelled',
      txHash: null,
      failureReason: null,
      completedAt: expect.any(String),
    });
    expect((await api.get(`/transactions/${tx.transactionId}`)).body.status).toBe('Cancelled');
    expect((await api.get(`/wallets/${w.walletId}/balance`)).body).toMatchObject({
      total: '2',
      available: '2',
      locked: '0',
      pending: '0',
    });
    const row = await ledgerAndBalance(w.walletId);
    expect(row).toMatchObject({ total: '200000000', available: '200000000', locked: '0' });
    const [release] = await sql(
      h,
      `SELECT kind, available_delta::text AS a, locked_delta::text AS l FROM ledger_entries
       WHERE transaction_id = $1 AND kind = 'release'`,
      [tx.transactionId],
    );
    expect(release).toEqual({ kind: 'release', a: '75000000', l: '-75000000' });
    const events = await statusEvents(tx.transactionId);
    expect(events).toHaveLength(1);
    expect(() => transactionStatusUpdatedData.strict().parse(events[0].data)).not.toThrow();
    expect(events[0].data).toMatchObject({
      status: 'Cancelled',
      previousStatus: 'Submitted',
      failureReason: null,
      completedAt: res.body.completedAt,
    });
    const balanceEvents = await sql(
      h,
      `SELECT 1 FROM outbox WHERE event_type = 'balance.updated' AND entity_id = $1`,
      [`${w.vaultId}:${ASSETS.BTC}`],
    );
    // deposit created, withdrawal created, withdrawal cancelled
    expect(balanceEvents).toHaveLength(3);
  });

  it('a repeated cancel answers 200 with the cancelled transaction and changes nothing more', async () => {
    const w = await creditedWallet('1');
    const tx = (await withdraw(w.walletId, '0.5').expect(201)).body;
    const first = await api.post(`/transactions/${tx.transactionId}/cancel`).expect(200);
    const again = await api.post(`/transactions/${tx.transactionId}/cancel`).expect(200);
    expect(again.body).toEqual(first.body);
    expect(await statusEvents(tx.transactionId)).toHaveLength(1);
    expect((await api.get(`/wallets/${w.walletId}/balance`)).body).toMatchObject({
      available: '1',
      locked: '0',
    });
    await ledgerAndBalance(w.walletId);
  });

  it('cancels from PendingSignature; 409 from Broadcasting, Confirming, Completed and Failed, nothing changed', async () => {
    const w = await creditedWallet('5');
    const pending = (await withdraw(w.walletId, '1').expect(201)).body;
    await setStatus(pending.transactionId, 'PendingSignature');
    await api.post(`/transactions/${pending.transactionId}/cancel`).expect(200);
    expect((await statusEvents(pending.transactionId))[0].data).toMatchObject({
      status: 'Cancelled',
      previousStatus: 'PendingSignature',
    });
    for (const status of ['Broadcasting', 'Confirming', 'Completed', 'Failed']) {
      const tx = (await withdraw(w.walletId, '0.1').expect(201)).body;
      await setStatus(tx.transactionId, status);
      const res = await api.post(`/transactions/${tx.transactionId}/cancel`).expect(409);
      expect(res.body).toEqual({ message: `The transaction is ${status} and can no longer be cancelled` });
      expect((await api.get(`/transactions/${tx.transactionId}`)).body.status).toBe(status);
      expect(await statusEvents(tx.transactionId)).toHaveLength(0);
    }
    // Four holds of 0.1 remain (their statuses were set by hand, without ledger effects).
    expect((await api.get(`/wallets/${w.walletId}/balance`)).body).toMatchObject({
      total: '5',
      available: '4.6',
      locked: '0.4',
    });
    await ledgerAndBalance(w.walletId);
  });

  it('cancels an internal transfer by moving the amount back; 409 once the destination has spent it', async () => {
    const a = await creditedWallet('3');
    const b = await fundedWallet(api, ASSETS.BTC, undefined);
    const transfer = (body: object) =>
      api.post('/transactions/transfer', body, { 'idempotency-key': newIdempotencyKey() }).expect(201);
    const t1 = (await transfer({ sourceWalletId: a.walletId, destinationWalletId: b.walletId, amount: '1' }))
      .body;
    const res = await api.post(`/transactions/${t1.transactionId}/cancel`).expect(200);
    expect(res.body).toMatchObject({ type: 'InternalTransfer', status: 'Cancelled' });
    expect((await api.get(`/wallets/${a.walletId}/balance`)).body).toMatchObject({
      total: '3',
      available: '3',
    });
    expect((await api.get(`/wallets/${b.walletId}/balance`)).body).toMatchObject({
      total: '0',
      available: '0',
    });
    await ledgerAndBalance(a.walletId);
    await ledgerAndBalance(b.walletId);
    const kinds = await sql<{ kind: string }>(
      h,
      `SELECT kind FROM ledger_entries WHERE transaction_id = $1 ORDER BY kind`,
      [t1.transactionId],
    );
    expect(kinds.map((k) => k.kind)).toEqual([
      'transfer-in',
      'transfer-out',
      'transfer-reversal-in',
      'transfer-reversal-out',
    ]);
    const balanceEvents = await sql<{ entity_id: string }>(
      h,
      `SELECT entity_id FROM outbox WHERE event_type = 'balance.updated' AND entity_id = ANY($1)`,
      [[`${a.vaultId}:${ASSETS.BTC}`, `${b.vaultId}:${ASSETS.BTC}`]],
    );
    // a: deposit, transfer, cancel; b: transfer, cancel
    expect(balanceEvents).toHaveLength(5);

    // The destination moves the credit on before the cancel: the reversal would overdraw it.
    const t2 = (await transfer({ sourceWalletId: a.walletId, destinationWalletId: b.walletId, amount: '1' }))
      .body;
    await withdraw(b.walletId, '0.6').expect(201);
    const refused = await api.post(`/transactions/${t2.transactionId}/cancel`).expect(409);
    expect(refused.body.message).toMatch(/destination wallet no longer holds/);
    expect((await api.get(`/transactions/${t2.transactionId}`)).body.status).toBe('Submitted');
    expect((await api.get(`/wallets/${b.walletId}/balance`)).body).toMatchObject({
      total: '1',
      available: '0.4',
      locked: '0.6',
    });
    expect(await statusEvents(t2.transactionId)).toHaveLength(0);
    await ledgerAndBalance(a.walletId);
    await ledgerAndBalance(b.walletId);
  });

  it('409 for a deposit; 404 for another tenant, the other environment and a non-UUID; 403 without the type scope', async () => {
    const w = await fundedWallet(api, ASSETS.BTC, undefined);
    const dep = (await api.post('/sandbox/deposits', { walletId: w.walletId, amount: '1' }).expect(201)).body;
    const refused = await api.post(`/transactions/${dep.transactionId}/cancel`).expect(409);
    expect(refused.body).toEqual({ message: 'A Deposit cannot be cancelled' });

    const funded = await creditedWallet('1');
    const tx = (await withdraw(funded.walletId, '0.1').expect(201)).body;
    const other = client(h.api, await createKey(h.api, await createTenant(h.api, 'Other')));
    await other.post(`/transactions/${tx.transactionId}/cancel`).expect(404);
    const live = client(h.api, await createKey(h.api, tenantId, { environment: 'live' }));
    await live.post(`/transactions/${tx.transactionId}/cancel`).expect(404);
    await api.post('/transactions/not-a-uuid/cancel').expect(404);
    await api.post('/transactions/00000000-0000-4000-8000-000000000000/cancel').expect(404);

    const transfersOnly = client(
      h.api,
      await createKey(h.api, tenantId, { scopes: ['transfers:write', 'transactions:read'] }),
    );
    const noType = await transfersOnly.post(`/transactions/${tx.transactionId}/cancel`).expect(403);
    expect(noType.body).toEqual({ message: 'This API key lacks the scope withdrawals:write' });
    const readOnly = client(h.api, await createKey(h.api, tenantId, { scopes: ['transactions:read'] }));
    await readOnly.post(`/transactions/${tx.transactionId}/cancel`).expect(403);
    expect((await api.get(`/transactions/${tx.transactionId}`)).body.status).toBe('Submitted');

    const withdrawalsOnly = client(
      h.api,
      await createKey(h.api, tenantId, { scopes: ['withdrawals:write', 'transactions:read'] }),
    );
    await withdrawalsOnly.post(`/transactions/${tx.transactionId}/cancel`).expect(200);
  });
});

describe('cancel with the worker running', () => {
  let cancelledBeforeWorker: { id: string; walletId: string };

  beforeAll(async () => {
    const w = await creditedWallet('1');
    const tx = (await withdraw(w.walletId, '0.3').expect(201)).body;
    await api.post(`/transactions/${tx.transactionId}/cancel`).expect(200);
    cancelledBeforeWorker = { id: tx.transactionId, walletId: w.walletId };
    worker = await bootApp(
      WorkerModule.forRoot(loadEnv({ ...h.env.env, CHAIN_SIM_STEP_DELAY_MS: '5', CHAIN_SIM_BLOCK_MS: '1' })),
      { rpc: false },
    );
  });

  it('treats a Cancelled transaction as terminal: its queued next step runs and does nothing', async () => {
    const queue = worker!.get(JobQueues, { strict: false }).queue(JOBS.CUSTODY_TRANSACTION_ADVANCE.queue);
    const jobId = `adv-${cancelledBeforeWorker.id}-Submitted`;
    await waitFor(
      async () => (await queue.getJob(jobId))?.getState(),
      (state) => state === 'completed',
    );
    expect((await api.get(`/transactions/${cancelledBeforeWorker.id}`)).body.status).toBe('Cancelled');
    expect(await statusEvents(cancelledBeforeWorker.id)).toHaveLength(1);
    expect((await api.get(`/wallets/${cancelledBeforeWorker.walletId}/balance`)).body).toMatchObject({
      total: '1',
      available: '1',
      locked: '0',
    });
  });

  it('409 once the withdrawal is Completed', async () => {
    const w = await fundedWallet(api, ASSETS.BTC, '1');
    const tx = (await withdraw(w.walletId, '0.4').expect(201)).body;
    await waitFor(
      () => api.get(`/transactions/${tx.transactionId}`).then((r) => r.body.status),
      (s) => s === 'Completed',
    );
    const res = await api.post(`/transactions/${tx.transactionId}/cancel`).expect(409);
    expect(res.body).toEqual({ message: 'The transaction is Completed and can no longer be cancelled' });
    expect((await api.get(`/wallets/${w.walletId}/balance`)).body).toMatchObject({
      total: '0.6',
      available: '0.6',
      locked: '0',
    });
    await ledgerAndBalance(w.walletId);
  });

  it('cancel racing the worker: exactly one terminal state each, nothing cancelled was broadcast, balances consistent', async () => {
    const COUNT = 40;
    const chain = worker!.get<ChainAdapter>(CHAIN_ADAPTER, { strict: false });
    const broadcast = chain.broadcast.bind(chain);
    const broadcasted = new Set<string>();
    // A slow broadcast widens the window between "sent to the chain" and "recorded as Broadcasting".
    const spy = jest.spyOn(chain, 'broadcast').mockImplementation(async (request) => {
      await new Promise((r) => setTimeout(r, Math.random() * 20));
      broadcasted.add(request.transactionId);
      return broadcast(request);
    });
    try {
      const w = await fundedWallet(api, ASSETS.BTC, '10');
      const created = await Promise.all(
        Array.from({ length: COUNT }, () => withdraw(w.walletId, '0.1').expect(201)),
      );
      const ids = created.map((r) => r.body.transactionId as string);
      const answers = await Promise.all(
        ids.map(async (id, i) => {
          await new Promise((r) => setTimeout(r, (i / COUNT) * 150));
          return api.post(`/transactions/${id}/cancel`);
        }),
      );
      const finals = await Promise.all(
        ids.map((id) =>
          waitFor(
            () => api.get(`/transactions/${id}`).then((r) => r.body),
            (t) => TERMINAL.includes(t.status),
          ),
        ),
      );
      let cancelled = 0;
      for (const [i, answer] of answers.entries()) {
        const final = finals[i];
        if (answer.status === 200) {
          expect(answer.body.status).toBe('Cancelled');
          expect(final.status).toBe('Cancelled');
          expect(final.txHash).toBeNull();
          expect(broadcasted.has(ids[i])).toBe(false);
          cancelled++;
        } else {
          expect(answer.status).toBe(409);
          expect(answer.body.message).toMatch(/can no longer be cancelled/);
          expect(final.status).toBe('Completed');
          expect(broadcasted.has(ids[i])).toBe(true);
        }
      }
      // The spread of cancel times makes both outcomes happen.
      expect(cancelled).toBeGreaterThan(0);
      expect(cancelled).toBeLessThan(COUNT);
      const terminalEvents = await sql<{ entity_id: string; n: number }>(
        h,
        `SELECT entity_id, count(*)::int AS n FROM outbox
         WHERE event_type = 'transaction.status.updated' AND entity_id = ANY($1)
           AND data->>'status' IN ('Completed', 'Failed', 'Cancelled')
         GROUP BY entity_id`,
        [ids],
      );
      expect(terminalEvents).toHaveLength(COUNT);
      expect(terminalEvents.every((e) => e.n === 1)).toBe(true);
      const completed = COUNT - cancelled;
      const row = await ledgerAndBalance(w.walletId);
      expect(row).toMatchObject({
        total: String(1_000_000_000 - completed * 10_000_000),
        available: String(1_000_000_000 - completed * 10_000_000),
        locked: '0',
        pending: '0',
      });
    } finally {
      spy.mockRestore();
    }
  });
});
