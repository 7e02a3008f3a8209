import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { reconciliationRun } from '@tessera/contracts';
import { bootApp, LogCapture, TEST_ADMIN_TOKEN } from '@tessera/testing';
import request from 'supertest';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { formatAmount } from '../src/common/amounts';
import { loadEnv } from '../src/config/env';
import { DIFFERENCE_ALERT } from '../src/modules/reconciliation/reconciliation.service';
import { AppModule } from '../src/app.module';
import { WorkerModule } from '../src/worker.module';
import { startHardhat, type HardhatNode } from './hardhat';
import {
  ASSETS,
  bootWorker,
  client,
  type Client,
  createKey,
  createTenant,
  fundedWallet,
  type Harness,
  newIdempotencyKey,
  sql,
  startHarness,
  waitFor,
} from './support';

/**
 * Reconciliation (decision 0226) against the real Hardhat node, Postgres and the real EVM watcher: a clean
 * run reports nothing; an unconfirmed deposit is explained; ETH that reaches a wallet address without the
 * scanner crediting it, and a balance row changed behind the ledger's back, are reported with their cause,
 * counted in the metric, and readable again by id.
 */
const ETH = 10n ** 18n;
const THRESHOLD = 3;

let node: HardhatNode;
let h: Harness;
let worker: NestFastifyApplication | undefined;
let chainVars: Record<string, string>;

beforeAll(async () => {
  node = await startHardhat();
  chainVars = {
    CHAIN_EVM_RPC_URL: node.url,
    CHAIN_EVM_CHAIN_ID: '31337',
    CHAIN_EVM_USDT_CONTRACT: node.usdt,
    CHAIN_EVM_CONFIRMATIONS: String(THRESHOLD),
    CHAIN_EVM_POLL_MS: '50',
    CUSTODY_RECONCILE_INTERVAL_MS: '0',
  };
  h = await startHarness(chainVars, { worker: false });
  worker = await bootWorker(h, chainVars);
}, 90_000);
afterAll(async () => {
  await worker?.close();
  await h?.close();
  await node?.stop();
});

const operator = () => ({
  post: (path: string, body?: object) =>
    request(h.api.getHttpServer()).post(path).set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`).send(body),
  get: (path: string) =>
    request(h.api.getHttpServer()).get(path).set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`),
});

async function tenantWithKeys() {
  const tenantId = await createTenant(h.api, `Recon ${Math.random().toString(36).slice(2)}`);
  return {
    tenantId,
    live: client(h.api, await createKey(h.api, tenantId, { environment: 'live' })),
    sandbox: client(h.api, await createKey(h.api, tenantId)),
  };
}

async function liveEthWallet(live: Client) {
  const vault = await live
    .post('/vaults', { externalId: `v-${Math.random().toString(36).slice(2)}`, name: 'Treasury' })
    .expect(201);
  const wallet = await live.post(`/vaults/${vault.body.id}/wallets`, { assetId: ASSETS.ETH }).expect(201);
  return { walletId: wallet.body.walletId as string, address: wallet.body.depositAddress as string };
}

const depositOf = (live: Client, walletId: string, hash: string) =>
  live
    .get(`/transactions?walletId=${walletId}&type=Deposit&take=200`)
    .then((r) =>
      (r.body.items as { txHash: string; status: string; transactionId: string }[]).find(
        (t) => t.txHash === hash,
      ),
    );

async function reconcile(tenantId: string) {
  const res = await operator().post('/admin/reconciliations', { tenantId }).expect(201);
  expect(reconciliationRun.safeParse(res.body).success).toBe(true);
  return res.body as ReturnType<typeof reconciliationRun.parse>;
}

describe('reconciliation', () => {
  it('a clean tenant (a credited on-chain deposit, a sandbox wallet) reports no difference', async () => {
    const { tenantId, live, sandbox } = await tenantWithKeys();
    const eth = await liveEthWallet(live);
    const hash = await node.sendRaw(await node.signTransfer(eth.address, 2n * ETH));
    await waitFor(
      () => depositOf(live, eth.walletId, hash),
      (t) => t?.status === 'Confirming',
      20_000,
    );
    await node.mine(THRESHOLD - 1);
    await waitFor(
      () => depositOf(live, eth.walletId, hash),
      (t) => t?.status === 'Completed',
      20_000,
    );
    await fundedWallet(sandbox, ASSETS.BTC, '1.5');

    const run = await reconcile(tenantId);
    expect(run).toMatchObject({
      trigger: 'operator',
      tenantId,
      status: 'completed',
      walletsChecked: 2,
      chainWalletsChecked: 1,
      differences: 0,
      explained: 0,
      findings: [],
    });
    const again = await operator().get(`/admin/reconciliations/${run.id}`).expect(200);
    expect(again.body).toEqual(run);
  }, 60_000);

  it('internal transfers between live ETH wallets move the ledger, not the chain: no difference (decision 0444)', async () => {
    const { tenantId, live } = await tenantWithKeys();
    const a = await liveEthWallet(live);
    const b = await liveEthWallet(live);
    const hash = await node.sendRaw(await node.signTransfer(a.address, 2n * ETH));
    await waitFor(
      () => depositOf(live, a.walletId, hash),
      (t) => t?.status === 'Confirming',
      20_000,
    );
    await node.mine(THRESHOLD - 1);
    await waitFor(
      () => depositOf(live, a.walletId, hash),
      (t) => t?.status === 'Completed',
      20_000,
    );
    const transfer = (from: string, to: string, amount: string) =>
      live
        .post(
          '/transactions/transfer',
          { sourceWalletId: from, destinationWalletId: to, amount },
          { 'Idempotency-Key': newIdempotencyKey() },
        )
        .expect(201)
        .then((r) => r.body.transactionId as string);
    // 0.75 to B, 0.25 of it back to A: the ledger says A 1.5, B 0.5; the chain still has all 2 ETH on A.
    const ids = [await transfer(a.walletId, b.walletId, '0.75')];
    ids.push(await transfer(b.walletId, a.walletId, '0.25'));
    for (const id of ids) {
      await waitFor(
        () => live.get(`/transactions/${id}`).then((r) => r.body),
        (t) => t.status === 'Completed',
        20_000,
      );
    }
    expect(await node.balance(a.address)).toBe(2n * ETH);
    expect(await node.balance(b.address)).toBe(0n);

    const run = await reconcile(tenantId);
    expect(run).toMatchObject({ status: 'completed', chainWalletsChecked: 2, differences: 0, findings: [] });

    // A real difference beside them is still found, against what the address should hold (2 ETH, not 1.5).
    await node.rpc('hardhat_setBalance', [a.address, `0x${((3n * ETH) / 2n).toString(16)}`]);
    const short = await reconcile(tenantId);
    expect(short.findings).toEqual([
      expect.objectContaining({
        walletId: a.walletId,
        cause: 'unexplained_shortfall',
        explained: false,
        expected: '2',
        actual: '1.5',
        difference: '-0.5',
      }),
    ]);
    expect(short.findings[0]!.details).toMatchObject({
      ledgerTotal: String((3n * ETH) / 2n),
      internalTransfersNet: String(-ETH / 2n),
    });
    await node.rpc('hardhat_setBalance', [a.address, `0x${(2n * ETH).toString(16)}`]);
  }, 60_000);

  it('a deposit mined but not yet confirmed is explained (unconfirmed_deposit), not an alert', async () => {
    const { tenantId, live } = await tenantWithKeys();
    const eth = await liveEthWallet(live);
    const hash = await node.sendRaw(await node.signTransfer(eth.address, ETH / 4n));
    await waitFor(
      () => depositOf(live, eth.walletId, hash),
      (t) => t?.status === 'Confirming',
      20_000,
    );
    const run = await reconcile(tenantId);
    expect(run.differences).toBe(0);
    expect(run.findings).toEqual([
      expect.objectContaining({
        walletId: eth.walletId,
        check: 'chain',
        cause: 'unconfirmed_deposit',
        explained: true,
        expected: '0',
        actual: '0.25',
        difference: '0.25',
      }),
    ]);
    await node.mine(THRESHOLD);
  }, 60_000);

  it('finds ETH on a wallet address that the ledger never credited (missing_credit), with metric and report', async () => {
    const { tenantId, live } = await tenantWithKeys();
    const eth = await liveEthWallet(live);
    // Funds appear on the address without any transaction the scanner could see.
    await node.rpc('hardhat_setBalance', [eth.address, `0x${(ETH / 2n).toString(16)}`]);

    const run = await reconcile(tenantId);
    expect(run).toMatchObject({ status: 'completed', chainWalletsChecked: 1, differences: 1, explained: 0 });
    expect(run.findings).toEqual([
      expect.objectContaining({
        walletId: eth.walletId,
        tenantId,
        assetSymbol: 'ETH',
        check: 'chain',
        cause: 'missing_credit',
        explained: false,
        expected: '0',
        actual: '0.5',
        difference: '0.5',
      }),
    ]);
    expect(run.findings[0]!.details).toMatchObject({
      addresses: [eth.address.toLowerCase()],
      unexplained: String(ETH / 2n),
    });

    const metrics = await request(h.api.getHttpServer()).get('/metrics').expect(200);
    expect(metrics.text).toMatch(
      /custody_reconciliation_findings_total\{check="chain",cause="missing_credit",explained="false"\} [1-9]/,
    );
    expect(metrics.text).toMatch(/custody_reconciliation_differences 1\b/);

    const list = await operator().get('/admin/reconciliations?take=5').expect(200);
    expect(list.body.items[0]).toMatchObject({ id: run.id, differences: 1 });
    expect(list.body.items[0]).not.toHaveProperty('findings');
  }, 60_000);

  it('finds a balance row changed in SQL behind the ledger (ledger_balance_mismatch), then clean once repaired', async () => {
    const { tenantId, sandbox } = await tenantWithKeys();
    const w = await fundedWallet(sandbox, ASSETS.BTC, '2');
    await sql(
      h,
      'UPDATE balances SET total = total + 50000000, available = available + 50000000 WHERE wallet_id = $1',
      [w.walletId],
    );
    const run = await reconcile(tenantId);
    expect(run.differences).toBe(1);
    expect(run.findings).toEqual([
      expect.objectContaining({
        walletId: w.walletId,
        assetSymbol: 'BTC',
        check: 'ledger',
        cause: 'ledger_balance_mismatch',
        explained: false,
        expected: '2',
        actual: '2.5',
        difference: '0.5',
      }),
    ]);
    expect(run.findings[0]!.details).toMatchObject({
      bucket: 'total',
      balance: { total: '250000000', available: '250000000' },
      sumOfEntries: { total: '200000000', available: '200000000' },
    });

    await sql(
      h,
      'UPDATE balances SET total = total - 50000000, available = available - 50000000 WHERE wallet_id = $1',
      [w.walletId],
    );
    expect(await reconcile(tenantId)).toMatchObject({ differences: 0, findings: [] });
  }, 60_000);

  it('the run list pages by cursor, newest first, every run once (runs of the same millisecond too)', async () => {
    const { tenantId } = await tenantWithKeys();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await operator().post('/admin/reconciliations', { tenantId }).expect(201)).body.id);
    // Five runs in one millisecond, ahead of every other run of the suite: microseconds apart.
    for (let i = 0; i < ids.length; i++)
      await sql(h, 'UPDATE reconciliation_runs SET started_at = $2::timestamptz WHERE id = $1', [
        ids[i],
        `2099-01-01T00:00:00.1230${i}1Z`,
      ]);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: { id: string }[]; nextCursor: string | null } = (
        await operator()
          .get(`/admin/reconciliations?take=2${cursor ? `&cursor=${cursor}` : ''}`)
          .expect(200)
      ).body;
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((r) => r.id));
      cursor = page.nextCursor;
    } while (cursor && seen.length < 5);
    expect(seen.slice(0, 5)).toEqual([...ids].reverse());
    const bad = await operator().get('/admin/reconciliations?cursor=not-a-cursor').expect(400);
    expect(bad.body.errors).toHaveProperty('cursor');
  });

  it('operator API edges: 401 without the token, 400 on a bad body, 404 on an unknown or malformed id', async () => {
    await request(h.api.getHttpServer()).post('/admin/reconciliations').send({}).expect(401);
    const bad = await operator().post('/admin/reconciliations', { tenantId: 'nope' }).expect(400);
    expect(bad.body.errors).toHaveProperty('tenantId');
    await operator().post('/admin/reconciliations', { extra: 1 }).expect(400);
    await operator().get('/admin/reconciliations/00000000-0000-4000-8000-000000000000').expect(404);
    await operator().get('/admin/reconciliations/not-a-uuid').expect(404);
    await operator().get('/admin/reconciliations?take=500').expect(400);
  });

  it('the worker runs it on schedule (CUSTODY_RECONCILE_INTERVAL_MS) and writes the alert line per difference', async () => {
    const { sandbox } = await tenantWithKeys();
    const w = await fundedWallet(sandbox, ASSETS.BTC, '1');
    await sql(h, 'UPDATE balances SET pending = pending + 7 WHERE wallet_id = $1', [w.walletId]);
    const logs = new LogCapture();
    const scheduled = await bootApp(
      WorkerModule.forRoot(
        loadEnv({
          ...h.env.env,
          ...chainVars,
          CUSTODY_RECONCILE_INTERVAL_MS: '200',
          LOG_LEVEL: 'info',
        }),
        { logDestination: logs },
      ),
      { rpc: false },
    );
    try {
      const alert = (await waitFor(
        async () => logs.json().find((l) => l.msg === DIFFERENCE_ALERT && l.walletId === w.walletId),
        (l) => l !== undefined,
        15_000,
      ))!;
      expect(alert).toMatchObject({
        level: 'error',
        alert: 'custody.reconciliation.difference',
        check: 'ledger',
        cause: 'ledger_balance_mismatch',
        assetSymbol: 'BTC',
        expected: '0',
        actual: '7',
        difference: '7',
      });
      expect(alert.runId).toEqual(expect.any(String));
      const run = await operator()
        .get(`/admin/reconciliations/${alert.runId as string}`)
        .expect(200);
      expect(run.body).toMatchObject({ trigger: 'scheduled', tenantId: null });
      expect(run.body.findings).toContainEqual(
        expect.objectContaining({
          walletId: w.walletId,
          difference: '0.00000007',
          details: expect.objectContaining({ bucket: 'pending' }),
        }),
      );
    } finally {
      await scheduled.close();
      await sql(h, 'UPDATE balances SET pending = pending - 7 WHERE wallet_id = $1', [w.walletId]);
    }
  }, 60_000);

  it('a run that cannot read the chain says so (partial) instead of reporting live wallets clean', async () => {
    const { tenantId, live } = await tenantWithKeys();
    await liveEthWallet(live);
    const variants: [Record<string, string>, RegExp][] = [
      [{}, /CHAIN_EVM_RPC_URL is not set/],
      [{ ...chainVars, CHAIN_EVM_RPC_URL: 'http://127.0.0.1:9' }, /The chain could not be read/],
    ];
    for (const [vars, error] of variants) {
      const api = await bootApp(AppModule.forRoot(loadEnv({ ...h.env.env, ...vars })), { rpc: false });
      try {
        const res = await request(api.getHttpServer())
          .post('/admin/reconciliations')
          .set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
          .send({ tenantId })
          .expect(201);
        expect(res.body).toMatchObject({ status: 'partial', chainWalletsChecked: 0, differences: 0 });
        expect(res.body.error).toMatch(error);
      } finally {
        await api.close();
      }
    }
  }, 60_000);

  it('a withdrawal mined but not yet confirmed is in_flight_withdrawal (explained); clean again once posted with its real fee', async () => {
    const { tenantId, live } = await tenantWithKeys();
    const eth = await liveEthWallet(live);
    const hash = await node.sendRaw(await node.signTransfer(eth.address, ETH));
    await waitFor(
      () => depositOf(live, eth.walletId, hash),
      (t) => t?.status === 'Confirming',
      20_000,
    );
    await node.mine(THRESHOLD - 1);
    await waitFor(
      () => depositOf(live, eth.walletId, hash),
      (t) => t?.status === 'Completed',
      20_000,
    );
    const destination = privateKeyToAccount(generatePrivateKey()).address;
    await live
      .post('/address-book', { assetId: ASSETS.ETH, address: destination, label: 'Cold' })
      .expect(201);

    await node.automine(false);
    let id: string;
    try {
      const res = await live
        .post(
          '/transactions/withdraw',
          { sourceWalletId: eth.walletId, destinationAddress: destination, amount: '0.2' },
          { 'Idempotency-Key': newIdempotencyKey() },
        )
        .expect(201);
      id = res.body.transactionId as string;
      // Broadcast, in the node's mempool, not mined: the chain and the ledger's total still agree (a hold only).
      await waitFor(
        () => live.get(`/transactions/${id}`).then((r) => r.body),
        (t) => t.status === 'Broadcasting' && Boolean(t.txHash),
        20_000,
      );
      expect(await reconcile(tenantId)).toMatchObject({ differences: 0, findings: [] });
      await node.mine(1);
    } finally {
      await node.automine(true);
    }
    // Mined, below the confirmation threshold: amount and fee have left the chain, the ledger posts at Completed.
    await waitFor(
      () => live.get(`/transactions/${id}`).then((r) => r.body),
      (t) => t.status === 'Confirming',
      20_000,
    );
    const inFlight = await reconcile(tenantId);
    expect(inFlight.differences).toBe(0);
    expect(inFlight.findings).toEqual([
      expect.objectContaining({
        walletId: eth.walletId,
        check: 'chain',
        cause: 'in_flight_withdrawal',
        explained: true,
        expected: '1',
      }),
    ]);
    // The difference is exactly what left the address: 0.2 ETH plus the fee actually paid.
    const spent = ETH - (await node.balance(eth.address));
    expect(spent).toBeGreaterThan((2n * ETH) / 10n);
    expect(inFlight.findings[0]).toMatchObject({
      actual: formatAmount(ETH - spent, 18),
      difference: formatAmount(-spent, 18),
    });

    await node.mine(THRESHOLD);
    await waitFor(
      () => live.get(`/transactions/${id}`).then((r) => r.body),
      (t) => t.status === 'Completed',
      20_000,
    );
    expect(await reconcile(tenantId)).toMatchObject({ differences: 0, findings: [] });
  }, 90_000);
});
