import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { CanonicalAddresses1795600000444 } from '../src/database/migrations/1795600000444-CanonicalAddresses';
import { StuckTransactionSweeper } from '../src/modules/transactions/stuck-transaction-sweeper';
import {
  admin,
  BASIC_SCOPES,
  ASSETS,
  client,
  type Client,
  createKey,
  createTenant,
  fundedWallet,
  type Harness,
  holding,
  type KeyPair,
  lockWaiters,
  newIdempotencyKey,
  sql,
  startHarness,
  waitFor,
} from './support';

// Withdrawal policies with approvals (decision 0220): real API and worker, real Postgres and Redis.

const BOOK = 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx';
const OTHER = 'tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7';
const XRP_DEST = 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh';

/** A well-formed key id that is not this one (its last hex digit changed). */
const otherKeyId = (apiKey: string) => apiKey.slice(0, -1) + (apiKey.endsWith('0') ? '1' : '0');
let h: Harness;
let tenantId: string;
let requesterKey: KeyPair;
let api: Client;
const approverKeys: KeyPair[] = [];
let approvers: Client[];
let outsider: Client;

const operator = () => admin(h.api);

const setPolicy = (body: unknown) => operator().put(`/admin/tenants/${tenantId}/policies/test`, body);

const withdraw = (walletId: string, amount: string, destinationAddress = BOOK, key = newIdempotencyKey()) =>
  api.post(
    '/transactions/withdraw',
    { sourceWalletId: walletId, destinationAddress, amount },
    { 'idempotency-key': key },
  );

const balance = async (walletId: string) => (await api.get(`/wallets/${walletId}/balance`).expect(200)).body;

/** Everything a withdrawal could have created for a wallet: transactions, ledger entries, outbox events. */
async function footprint(walletId: string, vaultId: string) {
  const [row] = await sql<{ tx: number; entries: number; events: number; decisions: number }>(
    h,
    `SELECT (SELECT count(*)::int FROM transactions WHERE wallet_id = $1 AND type = 'Withdrawal') AS tx,
            (SELECT count(*)::int FROM ledger_entries WHERE wallet_id = $1 AND kind = 'hold') AS entries,
            (SELECT count(*)::int FROM outbox WHERE entity_id = $2 || ':' || $3
               OR entity_id IN (SELECT id::text FROM transactions WHERE wallet_id = $1 AND type = 'Withdrawal')) AS events,
            (SELECT count(*)::int FROM policy_decisions WHERE transaction_id IN
               (SELECT id FROM transactions WHERE wallet_id = $1)) AS decisions`,
    [walletId, vaultId, ASSETS.BTC],
  );
  return row!;
}

const status = (id: string) => api.get(`/transactions/${id}`).then((r) => r.body.status as string);

beforeAll(async () => {
  h = await startHarness({ CUSTODY_APPROVAL_EXPIRY_INTERVAL_MS: '100', CHAIN_SIM_FAIL_DESTINATIONS: OTHER });
  tenantId = await createTenant(h.api);
  requesterKey = await createKey(h.api, tenantId, {
    scopes: [...BASIC_SCOPES, 'sandbox:write', 'policies:read', 'withdrawals:approve'],
  });
  api = client(h.api, requesterKey);
  for (let i = 0; i < 3; i++) {
    approverKeys.push(
      await createKey(h.api, tenantId, {
        scopes: ['transactions:read', 'withdrawals:approve', 'policies:read'],
      }),
    );
  }
  approvers = approverKeys.map((k) => client(h.api, k));
  outsider = client(
    h.api,
    await createKey(h.api, tenantId, { scopes: ['transactions:read', 'withdrawals:approve'] }),
  );
  await api.post('/address-book', { assetId: ASSETS.BTC, address: BOOK, label: 'Cold' }).expect(201);
  await api.post('/address-book', { assetId: ASSETS.BTC, address: OTHER, label: 'Other' }).expect(201);
}, 60_000);
afterAll(async () => {
  await h?.close();
});

describe('policy management', () => {
  it('operator PUT validates every field and names each problem; GET shows the normalised policy', async () => {
    // The shape first (zod): an amount outside the grammar is refused by path.
    const shape = await setPolicy({ maxAmount: [{ asset: 'BTC', amount: '1e3' }], extra: true }).expect(400);
    expect(Object.keys(shape.body.errors)).toEqual(expect.arrayContaining(['maxAmount.0.amount']));
    // Then the meaning: every problem at once, by path.
    const bad = await setPolicy({
      maxAmount: [{ asset: 'DOGE', amount: '1' }],
      velocity: [{ asset: 'BTC', per: 'wallet', amount: '0.123456789' }],
      approvals: [
        {
          asset: 'BTC',
          above: '1',
          required: 3,
          approvers: [approverKeys[0]!.apiKey, approverKeys[1]!.apiKey],
        },
      ],
    }).expect(400);
    expect(bad.body).toEqual({
      message: 'The policy is not valid',
      errors: {
        'maxAmount.0.asset': ['Unknown asset'],
        'velocity.0.amount': ['At most 8 decimal places for this asset'],
        'approvals.0.required': ['At most the number of approvers (2)'],
      },
    });
    // An approver must be a key of the tenant carrying withdrawals:approve.
    const lacking = await setPolicy({
      approvals: [{ asset: 'BTC', above: '1', required: 1, approvers: [otherKeyId(requesterKey.apiKey)] }],
    }).expect(400);
    expect(lacking.body.errors['approvals.0.approvers.0']).toBeDefined();
    const noScope = await createKey(h.api, tenantId, { scopes: ['transactions:read'] });
    const res = await setPolicy({
      approvals: [{ asset: 'btc', above: '0', required: 1, approvers: [noScope.apiKey] }],
    }).expect(400);
    expect(res.body.errors['approvals.0.approvers.0']).toEqual([
      'This API key lacks the scope withdrawals:approve',
    ]);

    const ok = await setPolicy({
      maxAmount: [{ asset: 'btc', amount: '2.5' }],
      velocity: [{ asset: ASSETS.BTC, per: 'vault', amount: '10' }],
      addressCooldownSeconds: 0,
    }).expect(200);
    expect(ok.body).toMatchObject({
      tenantId,
      environment: 'test',
      maxAmount: [{ assetId: ASSETS.BTC, assetSymbol: 'BTC', amount: '2.5' }],
      velocity: [{ assetId: ASSETS.BTC, per: 'vault', amount: '10', windowHours: 24 }],
      destinations: null,
      approvalWindowSeconds: 86400,
    });
    const version = ok.body.version as number;
    expect(version).toBeGreaterThanOrEqual(1);
    // The tenant reads it with policies:read; the live environment has none; without the scope: 403.
    expect((await api.get('/policies').expect(200)).body).toEqual(ok.body);
    const live = await operator().get(`/admin/tenants/${tenantId}/policies/live`).expect(200);
    expect(live.body).toMatchObject({ version: 0, maxAmount: [], environment: 'live' });
    const noRead = client(h.api, await createKey(h.api, tenantId, { scopes: ['transactions:read'] }));
    await noRead.get('/policies').expect(403);
    await request(h.api.getHttpServer()).put(`/admin/tenants/${tenantId}/policies/test`).send({}).expect(401);
    await operator().get(`/admin/tenants/${tenantId}/policies/staging`).expect(404);
    // A second PUT is a new version.
    expect((await setPolicy({}).expect(200)).body.version).toBe(version + 1);
  });
});

describe('policy management from the CLI', () => {
  it('set-policies reads a JSON file and policies prints it; a bad policy exits 1 with the errors', async () => {
    const cli = (...args: string[]) =>
      promisify(execFile)(process.execPath, [join(__dirname, '../dist/cli.js'), ...args], {
        env: { ...process.env, ...h.env.env, LOG_LEVEL: 'error' },
      });
    const file = join(tmpdir(), `policy-${process.pid}.json`);
    writeFileSync(
      file,
      JSON.stringify({ maxAmount: [{ asset: 'ETH', amount: '12.5' }], addressCooldownSeconds: 60 }),
    );
    const set = JSON.parse((await cli('set-policies', tenantId, 'test', file)).stdout);
    expect(set).toMatchObject({
      environment: 'test',
      maxAmount: [{ assetId: ASSETS.ETH, assetSymbol: 'ETH', amount: '12.5' }],
      addressCooldownSeconds: 60,
    });
    expect(JSON.parse((await cli('policies', tenantId, 'test')).stdout)).toEqual(set);
    expect((await api.get('/policies').expect(200)).body).toEqual(set);
    writeFileSync(file, JSON.stringify({ maxAmount: [{ asset: 'ETH', amount: '-1' }] }));
    const failure = await cli('set-policies', tenantId, 'test', file).catch(
      (e: { stdout: string; code: number }) => e,
    );
    expect((failure as { code: number }).code).toBe(1);
    expect(JSON.parse((failure as { stdout: string }).stdout)).toMatchObject({
      status: 400,
      errors: { 'maxAmount.0.amount': [expect.any(String)] },
    });
  }, 120_000);

  it('the scope preset "all" includes withdrawals:approve and policies:read', async () => {
    const res = await admin(h.api)
      .post(`/admin/tenants/${tenantId}/keys`, { environment: 'live', scopes: 'all' })
      .expect(201);
    expect(res.body.scopes).toEqual(expect.arrayContaining(['withdrawals:approve', 'policies:read']));
  });
});

describe('hard rules', () => {
  it('maxAmount: above the maximum is 400 naming the rule, and nothing is created (key not reserved)', async () => {
    await setPolicy({ maxAmount: [{ asset: 'BTC', amount: '1' }] }).expect(200);
    const w = await fundedWallet(api, ASSETS.BTC, '5');
    const before = await footprint(w.walletId, w.vaultId);
    const key = newIdempotencyKey();
    const refused = await withdraw(w.walletId, '1.00000001', BOOK, key).expect(400);
    expect(refused.body.message).toContain('maxAmount');
    expect(refused.body.errors['policy.maxAmount']).toEqual([
      expect.stringContaining('1 BTC per-transaction maximum'),
    ]);
    expect(await footprint(w.walletId, w.vaultId)).toEqual(before);
    expect(await balance(w.walletId)).toMatchObject({ available: '5', locked: '0' });
    const [reserved] = await sql<{ n: number }>(
      h,
      `SELECT count(*)::int AS n FROM idempotency_keys WHERE key = $1`,
      [key],
    );
    expect(reserved!.n).toBe(0);
    // The same key with a body the policy accepts is a new request.
    const ok = await withdraw(w.walletId, '1', BOOK, key).expect(201);
    expect(ok.body.pendingApprovals).toBeNull();
    expect(ok.body.policyDecisions).toEqual([
      expect.objectContaining({
        kind: 'evaluation',
        rule: 'maxAmount',
        outcome: 'passed',
        keyId: requesterKey.apiKey,
      }),
    ]);
    // The replay answers exactly the first response; GET shows the same decisions.
    expect((await withdraw(w.walletId, '1', BOOK, key).expect(201)).body).toEqual(ok.body);
    const got = (await api.get(`/transactions/${ok.body.transactionId}`).expect(200)).body;
    expect(got.policyDecisions).toEqual(ok.body.policyDecisions);
  });

  it('destinations: a deny list refuses a listed address; an allow list refuses every other one', async () => {
    const w = await fundedWallet(api, ASSETS.BTC, '3');
    await setPolicy({ destinations: { mode: 'deny', entries: [{ asset: 'BTC', address: OTHER }] } }).expect(
      200,
    );
    const denied = await withdraw(w.walletId, '0.1', OTHER).expect(400);
    expect(denied.body.errors['policy.destinations']).toEqual(['The destination is on the policy deny list']);
    await withdraw(w.walletId, '0.1', BOOK).expect(201);
    await setPolicy({ destinations: { mode: 'allow', entries: [{ asset: 'BTC', address: OTHER }] } }).expect(
      200,
    );
    const notAllowed = await withdraw(w.walletId, '0.1', BOOK).expect(400);
    expect(notAllowed.body.errors['policy.destinations']).toEqual([
      'The destination is not on the policy allow list',
    ]);
    const allowed = await withdraw(w.walletId, '0.1', OTHER).expect(201);
    expect(allowed.body.policyDecisions[0]).toMatchObject({ rule: 'destinations', outcome: 'passed' });
    const [count] = await sql<{ n: number }>(
      h,
      `SELECT count(*)::int AS n FROM transactions WHERE wallet_id = $1 AND type = 'Withdrawal'`,
      [w.walletId],
    );
    expect(count!.n).toBe(2);
  });

  it("destinations: an entry's tag takes null as absent, as every optional custody body field does (0484)", async () => {
    await setPolicy({
      destinations: { mode: 'deny', entries: [{ asset: 'XRP', address: XRP_DEST, tag: null }] },
    }).expect(200);
    const policy = (await api.get('/policies').expect(200)).body;
    expect(policy.destinations.entries).toEqual([expect.objectContaining({ address: XRP_DEST, tag: null })]);
    // Still a string when given: an empty one is refused, as before.
    const empty = await setPolicy({
      destinations: { mode: 'deny', entries: [{ asset: 'XRP', address: XRP_DEST, tag: '' }] },
    }).expect(400);
    expect(Object.keys(empty.body.errors)).toEqual(['destinations.entries.0.tag']);
  });

  it('destinations: an address or tag spelled another way is the same destination (canonical forms)', async () => {
    const w = await fundedWallet(api, ASSETS.BTC, '3');
    const x = await fundedWallet(api, ASSETS.XRP, '5');
    // bech32 is case-insensitive: the deny list and the book store the lowercase spelling.
    const SPARE = 'tb1q6d5073l86p4pldcjc3xsasw4kjvxshxwrpgrkv';
    await setPolicy({
      destinations: {
        mode: 'deny',
        entries: [
          { asset: 'BTC', address: SPARE.toUpperCase() },
          { asset: 'XRP', address: XRP_DEST, tag: '7' },
        ],
      },
    }).expect(200);
    const policy = (await api.get('/policies').expect(200)).body;
    expect(policy.destinations.entries).toEqual([
      expect.objectContaining({ address: SPARE, tag: null }),
      expect.objectContaining({ address: XRP_DEST, tag: '7' }),
    ]);
    const entry = await api
      .post('/address-book', { assetId: ASSETS.BTC, address: SPARE.toUpperCase(), label: 'Upper' })
      .expect(201);
    expect(entry.body.address).toBe(SPARE);
    for (const spelling of [SPARE.toUpperCase(), SPARE]) {
      const denied = await withdraw(w.walletId, '0.1', spelling).expect(400);
      expect(denied.body.errors['policy.destinations']).toEqual([
        'The destination is on the policy deny list',
      ]);
    }
    // An XRP tag is a number: "07" is the tag 7.
    const tagged = await api
      .post('/address-book', { assetId: ASSETS.XRP, address: XRP_DEST, tag: '07', label: 'Tag 7' })
      .expect(201);
    expect(tagged.body.tag).toBe('7');
    for (const destinationTag of ['07', '0000007', '7']) {
      const denied = await api
        .post(
          '/transactions/withdraw',
          { sourceWalletId: x.walletId, destinationAddress: XRP_DEST, destinationTag, amount: '1' },
          { 'idempotency-key': newIdempotencyKey() },
        )
        .expect(400);
      expect(denied.body.errors['policy.destinations']).toEqual([
        'The destination is on the policy deny list',
      ]);
    }
    const [count] = await sql<{ n: number }>(
      h,
      `SELECT count(*)::int AS n FROM transactions WHERE wallet_id = ANY($1) AND type = 'Withdrawal'`,
      [[w.walletId, x.walletId]],
    );
    expect(count!.n).toBe(0);
  });

  it('the migration rewrites destinations stored before canonical forms (book and policy lists)', async () => {
    const SPARE = 'tb1qrwefsm6lsd4680hzx94w55wth642k0umf9lcr9';
    await sql(
      h,
      `INSERT INTO address_book (tenant_id, environment, asset_id, address, tag, label)
       VALUES ($1, 'sandbox', $2, $3, NULL, 'old'), ($1, 'sandbox', $4, $5, '0042', 'old')`,
      [tenantId, ASSETS.BTC, SPARE.toUpperCase(), ASSETS.XRP, XRP_DEST],
    );
    await setPolicy({ destinations: { mode: 'deny', entries: [{ asset: 'BTC', address: SPARE }] } }).expect(
      200,
    );
    // The list as an older release stored it: each address and tag as the operator sent them.
    await sql(
      h,
      `UPDATE withdrawal_policies SET document = jsonb_set(document, '{destinations,entries}', $2::jsonb)
        WHERE tenant_id = $1 AND environment = 'sandbox'`,
      [
        tenantId,
        JSON.stringify([
          { assetId: ASSETS.BTC, address: SPARE.toUpperCase(), tag: null },
          { assetId: ASSETS.XRP, address: XRP_DEST, tag: '0042' },
        ]),
      ],
    );
    // A withdrawal in flight to the old spelling: the worker compares it with the book again before the broadcast.
    const source = await fundedWallet(api, ASSETS.BTC, '1');
    const inFlight = (await withdraw(source.walletId, '0.1').expect(201)).body as { transactionId: string };
    // The old spelling and the migration in one transaction: the worker is still moving this withdrawal, and
    // its completion (completed_at set) landing between the two would leave the row out of the migration.
    const runner = h.api.get(DataSource).createQueryRunner();
    try {
      await runner.startTransaction();
      await runner.query(
        'UPDATE transactions SET destination_address = $2, completed_at = NULL WHERE id = $1',
        [inFlight.transactionId, SPARE.toUpperCase()],
      );
      await new CanonicalAddresses1795600000444().up(runner);
      await runner.commitTransaction();
    } catch (err) {
      if (runner.isTransactionActive) await runner.rollbackTransaction();
      throw err;
    } finally {
      await runner.release();
    }
    const book = await sql<{ address: string; tag: string | null }>(
      h,
      `SELECT address, tag FROM address_book WHERE label = 'old' ORDER BY asset_id`,
    );
    expect(book).toEqual([
      { address: SPARE, tag: null },
      { address: XRP_DEST, tag: '42' },
    ]);
    const [rewritten] = await sql<{ destination_address: string }>(
      h,
      'SELECT destination_address FROM transactions WHERE id = $1',
      [inFlight.transactionId],
    );
    expect(rewritten!.destination_address).toBe(SPARE);
    const policy = (await api.get('/policies').expect(200)).body;
    expect(policy.destinations.entries).toEqual([
      expect.objectContaining({ assetId: ASSETS.BTC, address: SPARE, tag: null }),
      expect.objectContaining({ assetId: ASSETS.XRP, address: XRP_DEST, tag: '42' }),
    ]);
    const w = await fundedWallet(api, ASSETS.BTC, '1');
    await withdraw(w.walletId, '0.1', SPARE.toUpperCase()).expect(400);
  });

  it('addressCooldown: no withdrawal to an address-book entry younger than the delay', async () => {
    const w = await fundedWallet(api, ASSETS.BTC, '1');
    await setPolicy({ addressCooldownSeconds: 2 }).expect(200);
    // A fresh destination (a BTC testnet P2WSH address) added now.
    const fresh = 'tb1qqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesrxh6hy';
    const entry = await api.post('/address-book', { assetId: ASSETS.BTC, address: fresh, label: 'New' });
    expect(entry.status).toBe(201);
    const early = await withdraw(w.walletId, '0.1', fresh).expect(400);
    expect(early.body.errors['policy.addressCooldown']).toEqual([
      expect.stringContaining('younger than the 2 s cool-down'),
    ]);
    await new Promise((r) => setTimeout(r, 2100));
    await withdraw(w.walletId, '0.1', BOOK).expect(201);
    const later = await withdraw(w.walletId, '0.1', fresh).expect(201);
    expect(later.body.policyDecisions).toEqual([
      expect.objectContaining({
        rule: 'addressCooldown',
        outcome: 'passed',
        detail: expect.objectContaining({ cooldownSeconds: 2 }),
      }),
    ]);
  });

  it('velocity: per wallet and per vault over a rolling 24 h; Failed withdrawals do not count', async () => {
    const w = await fundedWallet(api, ASSETS.BTC, '5');
    await setPolicy({ velocity: [{ asset: 'BTC', per: 'wallet', amount: '1' }] }).expect(200);
    const first = await withdraw(w.walletId, '0.6').expect(201);
    const over = await withdraw(w.walletId, '0.5').expect(400);
    expect(over.body.errors['policy.velocity']).toEqual([expect.stringContaining('above the 1 BTC limit')]);
    await withdraw(w.walletId, '0.4').expect(201);
    // Completed withdrawals still count within 24 h.
    await waitFor(
      () => status(first.body.transactionId),
      (s) => s === 'Completed',
    );
    await withdraw(w.walletId, '0.00000001').expect(400);
    // Out of the window (created 25 h ago): no longer counted.
    await sql(h, `UPDATE transactions SET created_at = now() - interval '25 hours' WHERE id = $1`, [
      first.body.transactionId,
    ]);
    await withdraw(w.walletId, '0.6').expect(201);

    const v = await fundedWallet(api, ASSETS.BTC, '5');
    await setPolicy({ velocity: [{ asset: 'BTC', per: 'vault', amount: '0.5' }] }).expect(200);
    // OTHER fails at broadcast on the simulator (CHAIN_SIM_FAIL_DESTINATIONS): held, then released.
    const failing = await withdraw(v.walletId, '0.5', OTHER).expect(201);
    const vaultOver = await withdraw(v.walletId, '0.1').expect(400);
    expect(vaultOver.body.errors['policy.velocity']).toEqual([expect.stringContaining('from this vault')]);
    await waitFor(
      () => status(failing.body.transactionId),
      (s) => s === 'Failed',
    );
    await withdraw(v.walletId, '0.5').expect(201);
  });

  it('velocity under 20 concurrent withdrawals: the accepted ones never together exceed the limit', async () => {
    const w = await fundedWallet(api, ASSETS.BTC, '10');
    await setPolicy({ velocity: [{ asset: 'BTC', per: 'wallet', amount: '1' }] }).expect(200);
    const answers = await Promise.all(Array.from({ length: 20 }, () => withdraw(w.walletId, '0.15')));
    const accepted = answers.filter((r) => r.status === 201);
    const refused = answers.filter((r) => r.status === 400);
    expect(accepted.length + refused.length).toBe(20);
    expect(accepted).toHaveLength(6); // 6 × 0.15 = 0.9 ≤ 1 < 7 × 0.15
    for (const r of refused) expect(r.body.errors['policy.velocity']).toBeDefined();
    const [sum] = await sql<{ units: string; n: number }>(
      h,
      `SELECT COALESCE(sum(amount), 0)::text AS units, count(*)::int AS n FROM transactions
       WHERE wallet_id = $1 AND type = 'Withdrawal' AND status NOT IN ('Failed', 'Cancelled')`,
      [w.walletId],
    );
    expect(sum).toEqual({ units: '90000000', n: 6 });
    expect(BigInt(sum!.units)).toBeLessThanOrEqual(100_000_000n);
  });
});

describe('approvals', () => {
  const threshold = () =>
    setPolicy({
      approvals: [{ asset: 'BTC', above: '0.5', required: 2, approvers: approverKeys.map((k) => k.apiKey) }],
    }).expect(200);

  it('below the threshold it proceeds at once; above it waits Submitted with pendingApprovals', async () => {
    await threshold();
    const w = await fundedWallet(api, ASSETS.BTC, '3');
    const small = await withdraw(w.walletId, '0.5').expect(201);
    expect(small.body.pendingApprovals).toBeNull();
    expect(small.body.policyDecisions).toEqual([
      expect.objectContaining({ rule: 'approvals', outcome: 'passed' }),
    ]);
    await waitFor(
      () => status(small.body.transactionId),
      (s) => s === 'Completed',
    );

    const big = await withdraw(w.walletId, '1').expect(201);
    expect(big.body).toMatchObject({
      status: 'Submitted',
      pendingApprovals: {
        status: 'pending',
        required: 2,
        approvals: [],
        approvers: approverKeys.map((k) => k.apiKey),
        requestedBy: requesterKey.apiKey,
        expiresAt: expect.any(String),
      },
    });
    expect(big.body.policyDecisions).toEqual([
      expect.objectContaining({ rule: 'approvals', outcome: 'approval-required' }),
    ]);
    // The worker does not advance it, and the stuck sweeper does not count it as stuck.
    await new Promise((r) => setTimeout(r, 500));
    expect(await status(big.body.transactionId)).toBe('Submitted');
    const sweep = await h.worker!.get(StuckTransactionSweeper).sweep(1);
    expect(sweep.found).toBe(0);
    expect(await balance(w.walletId)).toMatchObject({ available: '1.5', locked: '1' });
  });

  it('a quorum of two keys starts it; a self-approval and a non-approver are refused with 403', async () => {
    await threshold();
    const w = await fundedWallet(api, ASSETS.BTC, '3');
    const tx = (await withdraw(w.walletId, '2').expect(201)).body;
    const id = tx.transactionId as string;
    const self = await api.post(`/transactions/${id}/approve`, {}).expect(403);
    expect(self.body).toEqual({
      message: 'The API key that requested a withdrawal cannot approve or reject it',
    });
    await outsider.post(`/transactions/${id}/approve`, {}).expect(403);
    await api.post(`/transactions/${id}/reject`, {}).expect(403);

    const one = await approvers[0]!.post(`/transactions/${id}/approve`, { note: 'checked' }).expect(200);
    expect(one.body.status).toBe('Submitted');
    expect(one.body.pendingApprovals.approvals).toEqual([
      { keyId: approverKeys[0]!.apiKey, at: expect.any(String) },
    ]);
    // A repeated approval by the same key is answered, not counted twice.
    const again = await approvers[0]!.post(`/transactions/${id}/approve`, {}).expect(200);
    expect(again.body.pendingApprovals.approvals).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 300));
    expect(await status(id)).toBe('Submitted');

    const two = await approvers[1]!.post(`/transactions/${id}/approve`, {}).expect(200);
    expect(two.body.pendingApprovals).toMatchObject({ status: 'approved', decidedAt: expect.any(String) });
    await waitFor(
      () => status(id),
      (s) => s === 'Completed',
    );
    expect(await balance(w.walletId)).toMatchObject({ total: '1', available: '1', locked: '0' });
    const done = (await api.get(`/transactions/${id}`).expect(200)).body;
    expect(done.policyDecisions.map((d: { kind: string }) => d.kind)).toEqual([
      'evaluation',
      'approval',
      'approval',
      'quorum',
    ]);
    expect(done.policyDecisions[1]).toMatchObject({
      keyId: approverKeys[0]!.apiKey,
      detail: { note: 'checked' },
    });
    // Once approved, a late vote is refused.
    await approvers[2]!.post(`/transactions/${id}/reject`, {}).expect(409);
  });

  it('votes racing each other count once each: the quorum is reached exactly once; a replay answers the pending body', async () => {
    await threshold();
    const w = await fundedWallet(api, ASSETS.BTC, '3');
    const key = newIdempotencyKey();
    const created = (await withdraw(w.walletId, '1', BOOK, key).expect(201)).body;
    const id = created.transactionId as string;
    // The stored Idempotency-Key response carries the approval request too.
    expect((await withdraw(w.walletId, '1', BOOK, key).expect(201)).body).toEqual(created);
    const votes = await Promise.all([
      approvers[0]!.post(`/transactions/${id}/approve`, {}),
      approvers[1]!.post(`/transactions/${id}/approve`, {}),
      approvers[2]!.post(`/transactions/${id}/approve`, {}),
      approvers[0]!.post(`/transactions/${id}/approve`, {}),
    ]);
    // Two approvals reach the quorum; a vote landing after it is 409 (or 200 for a repeat of a counted one).
    expect(votes.map((v) => v.status).filter((s) => s === 200).length).toBeGreaterThanOrEqual(2);
    for (const v of votes) expect([200, 409]).toContain(v.status);
    await waitFor(
      () => status(id),
      (s) => s === 'Completed',
    );
    const [counts] = await sql<{ quorum: number; approvals: number }>(
      h,
      `SELECT count(*) FILTER (WHERE kind = 'quorum')::int AS quorum,
              count(*) FILTER (WHERE kind = 'approval')::int AS approvals
       FROM policy_decisions WHERE transaction_id = $1`,
      [id],
    );
    expect(counts!.quorum).toBe(1);
    expect([2, 3]).toContain(counts!.approvals);
    const [posts] = await sql<{ n: number }>(
      h,
      `SELECT count(*)::int AS n FROM ledger_entries WHERE transaction_id = $1 AND kind = 'post'`,
      [id],
    );
    expect(posts!.n).toBe(1);
  });

  it("an approved withdrawal whose wake was lost is started by the worker's poll (decision 0491)", async () => {
    await threshold();
    const w = await fundedWallet(api, ASSETS.BTC, '2');
    const id = (await withdraw(w.walletId, '1').expect(201)).body.transactionId as string;
    await new Promise((r) => setTimeout(r, 300));
    // A quorum committed whose NOTIFY never came (a crash right after the commit): no API call wakes the worker.
    await sql(
      h,
      `UPDATE withdrawal_approvals SET status = 'approved', decided_at = now() WHERE transaction_id = $1`,
      [id],
    );
    await waitFor(
      () => status(id),
      (s) => s === 'Completed',
    );
    // Nothing is left for the stuck-transaction sweeper, the second backstop.
    expect(await h.worker!.get(StuckTransactionSweeper).sweep(1)).toMatchObject({ found: 0, requeued: 0 });
  });

  it('a rejection cancels it with the reason, releases the hold and emits the status event', async () => {
    await threshold();
    const w = await fundedWallet(api, ASSETS.BTC, '3');
    const id = (await withdraw(w.walletId, '1').expect(201)).body.transactionId as string;
    await approvers[0]!.post(`/transactions/${id}/approve`, {}).expect(200);
    const rejected = await approvers[2]!
      .post(`/transactions/${id}/reject`, { reason: 'unknown beneficiary' })
      .expect(200);
    expect(rejected.body).toMatchObject({
      status: 'Cancelled',
      failureReason: null,
      pendingApprovals: {
        status: 'rejected',
        reason: `Rejected by ${approverKeys[2]!.apiKey}: unknown beneficiary`,
      },
    });
    expect(await balance(w.walletId)).toMatchObject({ total: '3', available: '3', locked: '0' });
    const events = await sql<{ data: { status: string; previousStatus: string } }>(
      h,
      `SELECT data FROM outbox WHERE event_type = 'transaction.status.updated' AND entity_id = $1`,
      [id],
    );
    expect(events.map((e) => [e.data.previousStatus, e.data.status])).toEqual([['Submitted', 'Cancelled']]);
    await approvers[1]!.post(`/transactions/${id}/approve`, {}).expect(409);
    // Nothing moves it afterwards.
    await new Promise((r) => setTimeout(r, 300));
    expect(await status(id)).toBe('Cancelled');
  });

  it("a rejection racing the requester's cancel answers 409, never 500: one cancel, one release", async () => {
    await threshold();
    const w = await fundedWallet(api, ASSETS.BTC, '3');
    const id = (await withdraw(w.walletId, '1').expect(201)).body.transactionId as string;
    // The cancel takes the withdrawal's row and then waits for the wallet's balance row, which the test holds;
    // the rejection arrives in that moment. It must wait for the cancel and then find the withdrawal Cancelled.
    const lock = await holding(h, 'SELECT 1 FROM balances WHERE wallet_id = $1 FOR UPDATE', [w.walletId]);
    const lockWaits = () => lockWaiters(h);
    let cancel: Promise<{ status: number }>;
    let reject: Promise<{ status: number; body: { message?: string } }>;
    try {
      cancel = api.post(`/transactions/${id}/cancel`).then((r) => r);
      await waitFor(lockWaits, (n) => n === 1);
      reject = approvers[0]!.post(`/transactions/${id}/reject`, { reason: 'late' }).then((r) => r);
      await waitFor(lockWaits, (n) => n === 2);
    } finally {
      await lock.release();
    }
    expect((await cancel!).status).toBe(200);
    const refused = await reject!;
    expect(refused.status).toBe(409);
    expect(refused.body.message).toBe('The approval request is already cancelled');
    expect(await balance(w.walletId)).toMatchObject({ total: '3', available: '3', locked: '0' });

    // And raced freely, a few times: whichever lands first, no 5xx, one Cancelled, one release of the hold.
    for (let i = 0; i < 5; i++) {
      const raced = (await withdraw(w.walletId, '1').expect(201)).body.transactionId as string;
      const answers = await Promise.all([
        api.post(`/transactions/${raced}/cancel`),
        approvers[i % 3]!.post(`/transactions/${raced}/reject`, {}),
      ]);
      for (const a of answers) expect([200, 409]).toContain(a.status);
      expect(await status(raced)).toBe('Cancelled');
      const [releases] = await sql<{ n: number }>(
        h,
        `SELECT count(*)::int AS n FROM ledger_entries WHERE transaction_id = $1 AND kind = 'release'`,
        [raced],
      );
      expect(releases!.n).toBe(1);
    }
    expect(await balance(w.walletId)).toMatchObject({ total: '3', available: '3', locked: '0' });
  });

  it('an expired approval window cancels it (worker) and releases the hold', async () => {
    await setPolicy({
      approvals: [{ asset: 'BTC', above: '0', required: 1, approvers: [approverKeys[0]!.apiKey] }],
      approvalWindowSeconds: 1,
    }).expect(200);
    const w = await fundedWallet(api, ASSETS.BTC, '2');
    const id = (await withdraw(w.walletId, '0.5').expect(201)).body.transactionId as string;
    await waitFor(
      () => status(id),
      (s) => s === 'Cancelled',
      10_000,
    );
    const tx = (await api.get(`/transactions/${id}`).expect(200)).body;
    expect(tx.pendingApprovals).toMatchObject({
      status: 'expired',
      reason: 'Approval window expired with 0 of 1 approvals',
    });
    expect(tx.policyDecisions.map((d: { kind: string }) => d.kind)).toEqual(['evaluation', 'expiry']);
    expect(await balance(w.walletId)).toMatchObject({ available: '2', locked: '0' });
    await approvers[0]!.post(`/transactions/${id}/approve`, {}).expect(409);
  });

  it('a quorum the named approvers other than the requester cannot reach is refused (nothing created)', async () => {
    const requesterApprover = await createKey(h.api, tenantId, {
      scopes: [...BASIC_SCOPES, 'withdrawals:approve'],
    });
    await setPolicy({
      approvals: [
        {
          asset: 'BTC',
          above: '0',
          required: 2,
          approvers: [requesterApprover.apiKey, approverKeys[0]!.apiKey],
        },
      ],
    }).expect(200);
    const w = await fundedWallet(api, ASSETS.BTC, '1');
    const as = client(h.api, requesterApprover);
    const before = await footprint(w.walletId, w.vaultId);
    const res = await as
      .post(
        '/transactions/withdraw',
        { sourceWalletId: w.walletId, destinationAddress: BOOK, amount: '0.1' },
        { 'idempotency-key': newIdempotencyKey() },
      )
      .expect(400);
    expect(res.body.errors['policy.approvals']).toEqual([expect.stringContaining('needs 2 approvals')]);
    expect(await footprint(w.walletId, w.vaultId)).toEqual(before);
  });

  it('a transfer or a deposit needs no approval (409)', async () => {
    const w = await fundedWallet(api, ASSETS.BTC, '1');
    const [dep] = await sql<{ id: string }>(
      h,
      `SELECT id FROM transactions WHERE wallet_id = $1 AND type = 'Deposit'`,
      [w.walletId],
    );
    await approvers[0]!.post(`/transactions/${dep!.id}/approve`, {}).expect(409);
    await approvers[0]!.post(`/transactions/00000000-0000-4000-8000-000000000000/approve`, {}).expect(404);
  });
});
