import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { keccak256 } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { CHAIN_RESTARTED } from '../src/modules/chain/evm/evm-chain-identity';
import { EvmKeys, gasStationPath } from '../src/modules/chain/evm/evm-keys';
import { EvmWatcher } from '../src/modules/chain/evm/evm-watcher';
import { EvmRepository } from '../src/modules/chain/evm/evm.repository';
import { FUNDER, ODD_TOKEN_FEE_SINK, type OddTokenMode, startHardhat, type HardhatNode } from './hardhat';
import request from 'supertest';
import { TEST_ADMIN_TOKEN } from '@tessera/testing';
import {
  ASSETS,
  bootApi,
  bootWorker,
  client,
  type Client,
  createKey,
  createTenant,
  type Harness,
  type KeyPair,
  newIdempotencyKey,
  sql,
  startHarness,
  waitFor,
} from './support';

const ETH = 10n ** 18n;
const USDT = 10n ** 6n;
const THRESHOLD = 3;
const TERMINAL = ['Completed', 'Failed', 'Cancelled'];

let node: HardhatNode;
let h: Harness;
let live: Client;
let sandbox: Client;
let liveKey: KeyPair;
let chainVars: Record<string, string>;
let worker: NestFastifyApplication | undefined;
let tenantId: string;

beforeAll(async () => {
  node = await startHardhat();
  chainVars = {
    CHAIN_EVM_RPC_URL: node.url,
    CHAIN_EVM_CHAIN_ID: '31337',
    CHAIN_EVM_USDT_CONTRACT: node.usdt,
    CHAIN_EVM_CONFIRMATIONS: String(THRESHOLD),
    CHAIN_EVM_POLL_MS: '50',
    CHAIN_EVM_STUCK_AFTER_MS: '1500',
  };
  h = await startHarness(chainVars, { worker: false });
  worker = await bootWorker(h, chainVars);
  tenantId = await createTenant(h.api, 'Chain');
  liveKey = await createKey(h.api, tenantId, { environment: 'live' });
  live = client(h.api, liveKey);
  sandbox = client(h.api, await createKey(h.api, tenantId));
}, 90_000);
afterAll(async () => {
  await worker?.close();
  await h?.close();
  await node?.stop();
});

async function liveWallet(assetId: string) {
  const vault = await live
    .post('/vaults', { externalId: `v-${Math.random().toString(36).slice(2)}`, name: 'Chain vault' })
    .expect(201);
  const wallet = await live.post(`/vaults/${vault.body.id}/wallets`, { assetId }).expect(201);
  return {
    vaultId: vault.body.id as string,
    walletId: wallet.body.walletId as string,
    address: wallet.body.depositAddress as string,
  };
}

const depositsOf = (walletId: string) =>
  live.get(`/transactions?walletId=${walletId}&type=Deposit&take=200`).then((r) => r.body.items as any[]);
const balanceOf = (walletId: string) => live.get(`/wallets/${walletId}/balance`).then((r) => r.body);
const tx = (id: string) => live.get(`/transactions/${id}`).then((r) => r.body);
const until = <T>(probe: () => Promise<T>, done: (v: T) => boolean, ms = 20_000) => waitFor(probe, done, ms);

/** The transactions once every one is terminal, with a block mined every 100 ms meanwhile. */
async function settledWhileMining(ids: string[], ms: number): Promise<any[]> {
  const miner = setInterval(() => void node.mine(1).catch(() => undefined), 100);
  try {
    return await until(
      () => Promise.all(ids.map((id) => tx(id))),
      (list) => list.every((t) => TERMINAL.includes(t.status)),
      ms,
    );
  } finally {
    clearInterval(miner);
  }
}

/** Sum of the ledger entries of a wallet equals its balance row, and no bucket is negative. */
async function ledgerMatches(walletId: string) {
  const [row] = await sql(
    h,
    `SELECT b.total::text, b.available::text, b.pending::text, b.locked::text,
            COALESCE(SUM(e.total_delta), 0)::text AS st, COALESCE(SUM(e.available_delta), 0)::text AS sa,
            COALESCE(SUM(e.pending_delta), 0)::text AS sp, COALESCE(SUM(e.locked_delta), 0)::text AS sl
     FROM balances b LEFT JOIN ledger_entries e ON e.wallet_id = b.wallet_id WHERE b.wallet_id = $1
     GROUP BY b.wallet_id, b.total, b.available, b.pending, b.locked`,
    [walletId],
  );
  expect([row.st, row.sa, row.sp, row.sl]).toEqual([row.total, row.available, row.pending, row.locked]);
  for (const v of [row.total, row.available, row.pending, row.locked])
    expect(BigInt(v as string) >= 0n).toBe(true);
  return row;
}

async function creditedDeposit(walletId: string, address: string, amount: bigint, token = false) {
  const hash = await node.sendRaw(await node.signTransfer(address, amount, token));
  const found = await until(
    () => depositsOf(walletId).then((d) => d.find((t) => t.txHash === hash)),
    (t) => t?.status === 'Confirming',
  );
  await node.mine(THRESHOLD - 1);
  return until(
    () => tx(found.transactionId),
    (t) => t.status === 'Completed',
  );
}

describe('deposits', () => {
  it('an ETH deposit is detected, counts confirmations and is credited at the threshold with balance.updated', async () => {
    const w = await liveWallet(ASSETS.ETH);
    const hash = await node.sendRaw(await node.signTransfer(w.address, (3n * ETH) / 2n));
    const receipt = await node.receiptOf(hash);
    const seen = await until(
      () => depositsOf(w.walletId).then((d) => d[0]),
      (t) => t?.status === 'Confirming',
    );
    expect(seen).toMatchObject({
      type: 'Deposit',
      amount: '1.5',
      txHash: hash,
      destinationAddress: w.address,
      confirmations: 1,
      blockHash: receipt.blockHash,
      blockNumber: String(Number(receipt.blockNumber)),
    });
    expect(seen.sourceAddress).toBe(FUNDER.address);
    expect(await balanceOf(w.walletId)).toMatchObject({ total: '0', available: '0', pending: '1.5' });

    await node.mine(THRESHOLD - 2);
    const below = await until(
      () => tx(seen.transactionId),
      (t) => t.confirmations === THRESHOLD - 1,
    );
    expect(below.status).toBe('Confirming');
    expect(await balanceOf(w.walletId)).toMatchObject({ total: '0', pending: '1.5' });

    await node.mine(1);
    const done = await until(
      () => tx(seen.transactionId),
      (t) => t.status === 'Completed',
    );
    expect(done).toMatchObject({ confirmations: THRESHOLD, blockHash: receipt.blockHash, networkFee: null });
    expect(await balanceOf(w.walletId)).toMatchObject({ total: '1.5', available: '1.5', pending: '0' });
    const [stored] = await sql(h, `SELECT block_hash FROM evm_transfers WHERE transaction_id = $1`, [
      seen.transactionId,
    ]);
    expect(stored.block_hash).toBe(receipt.blockHash);

    // The credit's events: Confirming → Completed and a balance.updated in the same database transaction.
    const events = await sql<{ event_type: string; data: any }>(
      h,
      `SELECT event_type, data FROM outbox WHERE entity_id = $1 OR entity_id = $2 ORDER BY occurred_at, created_at`,
      [seen.transactionId, `${w.vaultId}:${ASSETS.ETH}`],
    );
    const types = events.map((e) => `${e.event_type}:${e.data.status ?? ''}`);
    expect(types[0]).toBe('transaction.created:Submitted');
    expect(types).toContain('transaction.status.updated:Completed');
    expect(types.filter((t) => t === 'balance.updated:')).toHaveLength(2); // pending at detection, credit at completion
    await ledgerMatches(w.walletId);
  });

  it('a USDT deposit (ERC-20 Transfer log) is credited at the threshold in 6-decimal units', async () => {
    const w = await liveWallet(ASSETS.USDT);
    const done = await creditedDeposit(w.walletId, w.address, 250_500_000n, true);
    expect(done).toMatchObject({ assetSymbol: 'USDT', amount: '250.5', confirmations: THRESHOLD });
    expect(await balanceOf(w.walletId)).toMatchObject({ total: '250.5', available: '250.5', pending: '0' });
    await ledgerMatches(w.walletId);
  });

  it('sandbox keys stay on the simulator: a sandbox ETH wallet receiving on-chain funds gets nothing', async () => {
    const vault = await sandbox.post('/vaults', { externalId: 'sbx', name: 'Sandbox' }).expect(201);
    const wallet = await sandbox
      .post(`/vaults/${vault.body.id}/wallets`, { assetId: ASSETS.ETH })
      .expect(201);
    const hash = await node.sendRaw(await node.signTransfer(wallet.body.depositAddress, ETH));
    await node.receiptOf(hash);
    const head = await node.head();
    await until(
      () => sql(h, `SELECT next_block FROM evm_cursors`).then((r) => Number(r[0]?.next_block ?? 0)),
      (n) => n > head,
    );
    const list = await sandbox.get(`/transactions?walletId=${wallet.body.walletId}`).expect(200);
    expect(list.body.items).toEqual([]);
    // …and a sandbox deposit still runs on the simulator.
    const dep = await sandbox
      .post('/sandbox/deposits', { walletId: wallet.body.walletId, amount: '2' })
      .expect(201);
    const done = await until(
      () => sandbox.get(`/transactions/${dep.body.transactionId}`).then((r) => r.body),
      (t) => t.status === 'Completed',
    );
    expect(done.confirmations).toBeNull();
  });
});

async function addressBookEntry(assetId: string) {
  const address = privateKeyToAccount(generatePrivateKey()).address;
  await live.post('/address-book', { assetId, address, label: 'Treasury' }).expect(201);
  return address;
}

const withdraw = (sourceWalletId: string, destinationAddress: string, amount: string) =>
  live
    .post(
      '/transactions/withdraw',
      { sourceWalletId, destinationAddress, amount },
      { 'Idempotency-Key': newIdempotencyKey() },
    )
    .expect(201)
    .then((r) => r.body.transactionId as string);

/** The signing account of a wallet's address, derived as the worker derives it (to play a crashed worker's part). */
async function walletSigner(walletId: string) {
  const [sender] = await sql<{ path: string; seed: string; tenant: string }>(
    h,
    `SELECT a.derivation_path AS path, t.hd_seed_sealed AS seed, t.id AS tenant
       FROM wallet_addresses a JOIN wallets wl ON wl.id = a.wallet_id JOIN tenants t ON t.id = wl.tenant_id
      WHERE a.wallet_id = $1`,
    [walletId],
  );
  return new EvmKeys(h.env.env.SECRETS_MASTER_KEY!).account(sender.tenant, sender.seed, sender.path);
}

const formatWei = (wei: bigint) => {
  const s = wei.toString().padStart(19, '0');
  const frac = s.slice(-18).replace(/0+$/, '');
  return frac ? `${s.slice(0, -18)}.${frac}` : s.slice(0, -18);
};

const feeOf = async (hash: string) => {
  const r = await node.rpc<{ gasUsed: string; effectiveGasPrice: string }>('eth_getTransactionReceipt', [
    hash,
  ]);
  return BigInt(r.gasUsed) * BigInt(r.effectiveGasPrice);
};

describe('withdrawals', () => {
  it('20 concurrent ETH withdrawals get distinct gap-free nonces, are all confirmed, and post their real fees', async () => {
    const w = await liveWallet(ASSETS.ETH);
    await creditedDeposit(w.walletId, w.address, 10n * ETH);
    const dest = await addressBookEntry(ASSETS.ETH);
    const ids = await Promise.all(Array.from({ length: 20 }, () => withdraw(w.walletId, dest, '0.1')));
    const finals = await settledWhileMining(ids, 90_000);
    expect(finals.map((t) => t.status)).toEqual(ids.map(() => 'Completed'));
    const rows = await sql<{ nonce: string; from_address: string; tx_hash: string }>(
      h,
      `SELECT nonce::text, from_address, tx_hash FROM evm_transfers e WHERE transaction_id = ANY($1) ORDER BY e.nonce`,
      [ids],
    );
    expect(rows.map((r) => Number(r.nonce))).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(new Set(rows.map((r) => r.from_address))).toEqual(new Set([w.address]));
    expect(Number(await node.rpc<string>('eth_getTransactionCount', [w.address, 'latest']))).toBe(20);
    for (const r of rows) {
      const onChain = await node.rpc<{ nonce: string }>('eth_getTransactionByHash', [r.tx_hash]);
      expect(Number(onChain.nonce)).toBe(Number(r.nonce));
    }
    expect(await node.balance(dest)).toBe(2n * ETH);
    let fees = 0n;
    for (const t of finals) {
      const fee = await feeOf(t.txHash);
      expect(t).toMatchObject({ feeCurrency: 'ETH', networkFee: formatWei(fee) });
      fees += fee;
    }
    // The ledger posted exactly what the chain spent: the wallet's total equals its address's balance.
    const onChainBalance = await node.balance(w.address);
    expect(onChainBalance).toBe(10n * ETH - 2n * ETH - fees);
    const row = await ledgerMatches(w.walletId);
    expect(row).toMatchObject({
      total: String(onChainBalance),
      available: String(onChainBalance),
      locked: '0',
    });
  }, 120_000);

  it("a USDT withdrawal is sent from its deposit address with gas topped up by the tenant's gas station", async () => {
    const w = await liveWallet(ASSETS.USDT);
    await creditedDeposit(w.walletId, w.address, 500n * USDT, true);
    const dest = await addressBookEntry(ASSETS.USDT);
    const station = (
      await request(h.api.getHttpServer())
        .get(`/admin/tenants/${tenantId}/gas-station`)
        .set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
        .expect(200)
    ).body;
    expect(station).toMatchObject({
      tenantId,
      network: 'ethereum',
      environment: 'live',
      derivationPath: "m/44'/60'/0'/1/0",
    });
    expect(await node.balance(w.address)).toBe(0n);

    // An empty gas station cannot pay: Failed before anything is sent, the hold released.
    const refused = await withdraw(w.walletId, dest, '10');
    const failed = await until(
      () => tx(refused),
      (t) => TERMINAL.includes(t.status),
    );
    expect(failed).toMatchObject({
      status: 'Failed',
      failureReason: "The tenant's gas station cannot pay the network fee",
      txHash: null,
    });
    expect(await balanceOf(w.walletId)).toMatchObject({ available: '500', locked: '0' });

    await node.rpc('hardhat_setBalance', [station.address, `0x${ETH.toString(16)}`]);
    const id = await withdraw(w.walletId, dest, '120.25');
    const [done] = await settledWhileMining([id], 30_000);
    expect(done).toMatchObject({
      status: 'Completed',
      feeCurrency: 'ETH',
      networkFee: formatWei(await feeOf(done.txHash)),
    });
    expect(await node.tokenBalance(dest)).toBe(120_250_000n);
    expect(await node.tokenBalance(w.address)).toBe(379_750_000n);
    expect(await node.balance(station.address)).toBeLessThan(ETH);
    expect(await ledgerMatches(w.walletId)).toMatchObject({
      total: '379750000',
      available: '379750000',
      locked: '0',
    });
  }, 60_000);

  it('a transfer that reverts on-chain (receipt status 0) is Failed with failureReason and releases the amount', async () => {
    const w = await liveWallet(ASSETS.USDT);
    await creditedDeposit(w.walletId, w.address, 100n * USDT, true);
    const dest = await addressBookEntry(ASSETS.USDT);
    await node.rpc('hardhat_setBalance', [w.address, `0x${ETH.toString(16)}`]);
    await node.rpc('hardhat_impersonateAccount', [w.address]);
    await node.automine(false);
    let id: string;
    try {
      // Someone holding the key moves the tokens first (pending, mined before the withdrawal in the next block).
      await node.rpc('eth_sendTransaction', [
        {
          from: w.address,
          to: node.usdt,
          data: node.encodeTokenTransfer(FUNDER.address, 100n * USDT),
          gas: '0x30000',
        },
      ]);
      id = await withdraw(w.walletId, dest, '40');
      const sent = await until(
        () => tx(id),
        (t) => t.status === 'Broadcasting',
      );
      expect(sent).toMatchObject({ txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/), feeCurrency: 'ETH' });
      expect(sent.networkFee).not.toBeNull();
      await node.mine(1);
    } finally {
      await node.automine(true);
      await node.rpc('hardhat_stopImpersonatingAccount', [w.address]);
    }
    await node.mine(THRESHOLD);
    const failed = await until(
      () => tx(id),
      (t) => t.status === 'Failed',
    );
    expect(failed.failureReason).toBe('Reverted on-chain (receipt status 0)');
    expect((await node.receiptOf(failed.txHash)).status).toBe('0x0');
    expect(failed.networkFee).toBe(formatWei(await feeOf(failed.txHash)));
    expect(await balanceOf(w.walletId)).toMatchObject({ total: '100', available: '100', locked: '0' });
    await ledgerMatches(w.walletId);
  });

  it('a withdrawal stuck unmined is re-broadcast with bumped fees under its nonce and completes once', async () => {
    const w = await liveWallet(ASSETS.ETH);
    await creditedDeposit(w.walletId, w.address, ETH);
    const dest = await addressBookEntry(ASSETS.ETH);
    await node.automine(false);
    let id: string;
    let first: any;
    let bumped: any;
    try {
      id = await withdraw(w.walletId, dest, '0.25');
      first = await until(
        () => tx(id),
        (t) => t.status === 'Broadcasting',
      );
      bumped = await until(
        () => tx(id),
        (t) => t.txHash !== first.txHash,
        20_000,
      );
    } finally {
      await node.automine(true);
    }
    await node.mine(THRESHOLD);
    const done = await until(
      () => tx(id),
      (t) => t.status === 'Completed',
    );
    expect(done.txHash).toBe(bumped.txHash);
    const [row] = await sql<{ sent_hashes: string[] }>(
      h,
      `SELECT sent_hashes FROM evm_transfers WHERE transaction_id = $1`,
      [id],
    );
    expect(row.sent_hashes[0]).toBe(first.txHash);
    expect(row.sent_hashes).toContain(done.txHash);
    const original = await node.rpc('eth_getTransactionReceipt', [first.txHash]);
    expect(original).toBeNull();
    const replacement = await node.rpc<{ maxFeePerGas: string; nonce: string }>('eth_getTransactionByHash', [
      done.txHash,
    ]);
    expect(Number(replacement.nonce)).toBe(0);
    expect(await node.balance(dest)).toBe(ETH / 4n);
    const onChain = await node.balance(w.address);
    expect(await ledgerMatches(w.walletId)).toMatchObject({ total: String(onChain), locked: '0' });
  }, 60_000);
});

describe('tokens that depart from ERC-20 (decision 0466)', () => {
  /** A live USDT wallet holding `amount` USDT on chain and 1 ETH for its own gas (no top-up needed). */
  async function fundedTokenWallet(amount: bigint) {
    const w = await liveWallet(ASSETS.USDT);
    await creditedDeposit(w.walletId, w.address, amount, true);
    await node.rpc('hardhat_setBalance', [w.address, `0x${ETH.toString(16)}`]);
    return w;
  }

  /** Runs `fn` with the stand-in's code replaced by OddToken's in `mode`, then puts the stand-in back. */
  async function withOddToken<T>(mode: OddTokenMode, fn: () => Promise<T>): Promise<T> {
    const restore = await node.oddToken(mode);
    try {
      return await fn();
    } finally {
      await restore();
    }
  }

  it('a transfer that returns no value (mainnet USDT) completes', async () => {
    const w = await fundedTokenWallet(50n * USDT);
    const dest = await addressBookEntry(ASSETS.USDT);
    const done = await withOddToken(2, async () => {
      const [settled] = await settledWhileMining([await withdraw(w.walletId, dest, '20')], 30_000);
      return settled;
    });
    expect(done).toMatchObject({ status: 'Completed', failureReason: null });
    expect(await node.tokenBalance(dest)).toBe(20n * USDT);
    expect(await ledgerMatches(w.walletId)).toMatchObject({ total: '30000000', locked: '0' });
  }, 60_000);

  it('a fee-taking token (two Transfer logs from the sender) completes for the whole amount', async () => {
    const w = await fundedTokenWallet(50n * USDT);
    const dest = await addressBookEntry(ASSETS.USDT);
    const sinkBefore = await node.tokenBalance(ODD_TOKEN_FEE_SINK);
    const done = await withOddToken(1, async () => {
      const [settled] = await settledWhileMining([await withdraw(w.walletId, dest, '10')], 30_000);
      return settled;
    });
    expect(done).toMatchObject({ status: 'Completed' });
    expect(await node.tokenBalance(dest)).toBe(9_900_000n);
    expect((await node.tokenBalance(ODD_TOKEN_FEE_SINK)) - sinkBefore).toBe(100_000n);
    // The sending address lost the whole amount, and so did the ledger.
    expect(await node.tokenBalance(w.address)).toBe(40n * USDT);
    expect(await ledgerMatches(w.walletId)).toMatchObject({ total: '40000000', locked: '0' });
  }, 60_000);

  it('a token that would answer false is refused before anything is sent, the amount released', async () => {
    const w = await fundedTokenWallet(50n * USDT);
    const dest = await addressBookEntry(ASSETS.USDT);
    const failed = await withOddToken(0, async () => {
      const id = await withdraw(w.walletId, dest, '5');
      return until(
        () => tx(id),
        (t) => TERMINAL.includes(t.status),
      );
    });
    expect(failed).toMatchObject({
      status: 'Failed',
      failureReason: 'The token contract would refuse the transfer: it answers false without reverting',
      txHash: null,
    });
    expect(await node.rpc<string>('eth_getTransactionCount', [w.address, 'latest'])).toBe('0x0');
    expect(await balanceOf(w.walletId)).toMatchObject({ total: '50', available: '50', locked: '0' });
  }, 60_000);

  it('a mined transfer whose token moved nothing (status 1, no Transfer log) is Failed, not Completed', async () => {
    const w = await fundedTokenWallet(50n * USDT);
    const dest = await addressBookEntry(ASSETS.USDT);
    let id = '';
    await withOddToken(2, async () => {
      await node.automine(false);
      try {
        id = await withdraw(w.walletId, dest, '15');
        await until(
          () => tx(id),
          (t) => t.status === 'Broadcasting',
        );
        // The token changes its mind between the worker's simulation and the block that runs the send.
        await node.oddTokenMode(0);
        await node.mine(1);
      } finally {
        await node.automine(true);
      }
      await node.mine(THRESHOLD);
      await until(
        () => tx(id),
        (t) => TERMINAL.includes(t.status),
      );
    });
    const failed = await tx(id);
    expect(failed).toMatchObject({
      status: 'Failed',
      failureReason:
        'The token contract accepted the transfer but moved nothing (no Transfer log from the sending address)',
    });
    expect((await node.receiptOf(failed.txHash)).status).toBe('0x1');
    expect(failed.networkFee).toBe(formatWei(await feeOf(failed.txHash)));
    expect(await node.tokenBalance(w.address)).toBe(50n * USDT);
    expect(await node.tokenBalance(dest)).toBe(0n);
    expect(await ledgerMatches(w.walletId)).toMatchObject({
      total: '50000000',
      available: '50000000',
      locked: '0',
    });
  }, 60_000);
});

describe('internal transfers between live wallets (decision 0444)', () => {
  const transfer = (sourceWalletId: string, destinationWalletId: string, amount: string) =>
    live
      .post(
        '/transactions/transfer',
        { sourceWalletId, destinationWalletId, amount },
        { 'Idempotency-Key': newIdempotencyKey() },
      )
      .expect(201)
      .then((r) => r.body.transactionId as string);

  it('a transfer between two live ETH wallets completes (completedAt set) and sends nothing on chain', async () => {
    const a = await liveWallet(ASSETS.ETH);
    const b = await liveWallet(ASSETS.ETH);
    await creditedDeposit(a.walletId, a.address, ETH);
    const id = await transfer(a.walletId, b.walletId, '0.4');
    const done = await until(
      () => tx(id),
      (t) => TERMINAL.includes(t.status),
    );
    expect(done).toMatchObject({
      type: 'InternalTransfer',
      status: 'Completed',
      completedAt: expect.any(String),
      txHash: null,
      confirmations: null,
    });
    const statuses = await sql<{ status: string }>(
      h,
      `SELECT data->>'status' AS status FROM outbox WHERE entity_id = $1 AND event_type = 'transaction.status.updated'
       ORDER BY sequence`,
      [id],
    );
    expect(statuses.map((e) => e.status)).toEqual([
      'PendingSignature',
      'Broadcasting',
      'Confirming',
      'Completed',
    ]);
    expect(await balanceOf(a.walletId)).toMatchObject({ total: '0.6', available: '0.6' });
    expect(await balanceOf(b.walletId)).toMatchObject({ total: '0.4', available: '0.4' });
    // Nothing moved on chain: the ETH stays on the sending wallet's address.
    expect(await node.balance(a.address)).toBe(ETH);
    expect(await node.balance(b.address)).toBe(0n);
    await ledgerMatches(a.walletId);
    await ledgerMatches(b.walletId);
  });

  it('a withdrawal of a balance received by internal transfer fails before anything is sent, saying why', async () => {
    const a = await liveWallet(ASSETS.ETH);
    const b = await liveWallet(ASSETS.ETH);
    await creditedDeposit(a.walletId, a.address, ETH);
    const moved = await transfer(a.walletId, b.walletId, '0.5');
    await until(
      () => tx(moved),
      (t) => t.status === 'Completed',
    );
    const dest = await addressBookEntry(ASSETS.ETH);
    const id = await withdraw(b.walletId, dest, '0.3');
    const failed = await until(
      () => tx(id),
      (t) => TERMINAL.includes(t.status),
    );
    expect(failed).toMatchObject({ status: 'Failed', txHash: null });
    expect(failed.failureReason).toBe(
      "The wallet's deposit address holds 0 ETH on chain, less than the 0.3 ETH to send: " +
        'a balance received by internal transfer stays on the address of the wallet that sent it',
    );
    expect(await balanceOf(b.walletId)).toMatchObject({ total: '0.5', available: '0.5', locked: '0' });
    expect(Number(await node.rpc<string>('eth_getTransactionCount', [b.address, 'latest']))).toBe(0);
    expect(await node.balance(dest)).toBe(0n);
    await ledgerMatches(b.walletId);
  });
});

describe('reorgs', () => {
  it('an unconfirmed deposit reorged away fails as "reorged"; one mined again is credited once', async () => {
    const w = await liveWallet(ASSETS.ETH);
    const snap = await node.snapshot();
    const rawA = await node.signTransfer(w.address, 2n * ETH);
    const rawB = await node.signTransfer(w.address, 3n * ETH);
    const hashA = await node.sendRaw(rawA);
    const hashB = await node.sendRaw(rawB);
    const seen = await until(
      () => depositsOf(w.walletId),
      (d) => d.length === 2 && d.every((t) => t.confirmations >= 1),
    );
    const a = seen.find((t) => t.txHash === hashA);
    const b = seen.find((t) => t.txHash === hashB);
    await node.revert(snap);
    node.resetNonce();
    await node.mine(2);
    await node.sendRaw(rawA); // back in the new chain, in another block
    const failed = await until(
      () => tx(b.transactionId),
      (t) => t.status === 'Failed',
    );
    expect(failed.failureReason).toBe('reorged');
    await node.mine(THRESHOLD);
    const done = await until(
      () => tx(a.transactionId),
      (t) => t.status === 'Completed',
    );
    const receipt = await node.receiptOf(hashA);
    expect(done.blockHash).toBe(receipt.blockHash);
    expect(done.blockHash).not.toBe(a.blockHash);
    expect((await depositsOf(w.walletId)).length).toBe(2);
    expect(await balanceOf(w.walletId)).toMatchObject({ total: '2', available: '2', pending: '0' });
    await ledgerMatches(w.walletId);
  }, 60_000);

  it('a credited deposit whose block is reorged away is flagged, and never credited twice when mined again', async () => {
    const w = await liveWallet(ASSETS.ETH);
    const snap = await node.snapshot();
    const raw = await node.signTransfer(w.address, ETH);
    const hash = await node.sendRaw(raw);
    const found = await until(
      () => depositsOf(w.walletId).then((d) => d[0]),
      (t) => t?.status === 'Confirming',
    );
    await node.mine(THRESHOLD - 1);
    await until(
      () => tx(found.transactionId),
      (t) => t.status === 'Completed',
    );
    await node.revert(snap);
    node.resetNonce();
    await node.mine(THRESHOLD + 2);
    const flag = () =>
      sql<{ orphaned_after_credit: boolean; block_hash: string | null }>(
        h,
        `SELECT orphaned_after_credit, block_hash FROM evm_transfers WHERE transaction_id = $1`,
        [found.transactionId],
      ).then((r) => r[0]);
    await until(flag, (r) => r.orphaned_after_credit);
    await node.sendRaw(raw);
    await node.mine(THRESHOLD);
    const receipt = await node.receiptOf(hash);
    await until(flag, (r) => !r.orphaned_after_credit && r.block_hash === receipt.blockHash);
    expect(await depositsOf(w.walletId)).toHaveLength(1);
    expect(await balanceOf(w.walletId)).toMatchObject({ total: '1', available: '1', pending: '0' });
    await ledgerMatches(w.walletId);
  }, 60_000);
});

describe('restarts', () => {
  it('a worker restarted in the middle of a scan misses and duplicates nothing', async () => {
    await worker!.close();
    worker = undefined;
    const e = await liveWallet(ASSETS.ETH);
    const u = await liveWallet(ASSETS.USDT);
    const hashes: string[] = [];
    const blocks: number[] = [];
    for (let i = 0; i < 6; i++) {
      const token = i % 2 === 1;
      const hash = await node.sendRaw(
        await node.signTransfer(
          token ? u.address : e.address,
          BigInt(i + 1) * (token ? USDT : ETH / 10n),
          token,
        ),
      );
      hashes.push(hash);
      blocks.push(Number((await node.receiptOf(hash)).blockNumber));
      await node.mine(15);
    }
    const head = await node.head();
    const cursor = () => sql(h, `SELECT next_block FROM evm_cursors`).then((r) => Number(r[0].next_block));
    const countOf = () =>
      sql<{ n: string }>(h, `SELECT count(*)::text AS n FROM transactions WHERE tx_hash = ANY($1)`, [
        hashes,
      ]).then((r) => Number(r[0].n));
    worker = await bootWorker(h, { ...chainVars, CHAIN_EVM_SCAN_BATCH: '2', CHAIN_EVM_POLL_MS: '300' });
    await until(cursor, (c) => c > blocks[0], 20_000);
    await worker.close();
    worker = undefined;
    const partial = await countOf();
    expect(await cursor()).toBeLessThanOrEqual(blocks[5]);
    expect(partial).toBeGreaterThanOrEqual(1);
    expect(partial).toBeLessThan(6);

    worker = await bootWorker(h, chainVars);
    await until(cursor, (c) => c > head, 30_000);
    expect(await countOf()).toBe(6);
    // A rescan of the same blocks (cursor moved back by hand) recognises every transfer and creates nothing.
    await sql(h, `UPDATE evm_cursors SET next_block = $1`, [blocks[0] - 1]);
    await until(cursor, (c) => c > head, 30_000);
    const rows = await sql<{ tx_hash: string; n: string }>(
      h,
      `SELECT tx_hash, count(*)::text AS n FROM transactions WHERE tx_hash = ANY($1) GROUP BY tx_hash`,
      [hashes],
    );
    expect(rows).toHaveLength(6);
    expect(rows.every((r) => r.n === '1')).toBe(true);
  }, 90_000);
});

describe('gas top-ups under load (decision 0439)', () => {
  it('more concurrent USDT withdrawals needing a top-up than the worker has connections all complete', async () => {
    // A worker with a 3-connection pool: 5 broadcasts at once each hold one while their top-up runs. On the
    // main pool that was a deadlock (each waiting for a 4th connection); the station has a pool of its own.
    await worker?.close();
    worker = await bootWorker(h, { ...chainVars, DB_POOL_SIZE: '3' });
    const station = (
      await request(h.api.getHttpServer())
        .get(`/admin/tenants/${tenantId}/gas-station`)
        .set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
        .expect(200)
    ).body;
    await node.rpc('hardhat_setBalance', [station.address, `0x${(10n * ETH).toString(16)}`]);
    const dest = await addressBookEntry(ASSETS.USDT);
    const wallets = [];
    for (let i = 0; i < 5; i++) {
      const w = await liveWallet(ASSETS.USDT);
      await creditedDeposit(w.walletId, w.address, 50n * USDT, true);
      expect(await node.balance(w.address)).toBe(0n);
      wallets.push(w);
    }
    const ids = await Promise.all(wallets.map((w) => withdraw(w.walletId, dest, '10')));
    const done = await settledWhileMining(ids, 45_000);
    expect(done.map((t) => t.status)).toEqual(ids.map(() => 'Completed'));
    for (const w of wallets) expect(await ledgerMatches(w.walletId)).toMatchObject({ total: '40000000' });
  }, 120_000);
});

describe('an earlier send that was never recorded (decision 0440)', () => {
  /**
   * What an attempt leaves when the node took its transaction and its database transaction then rolled back (a
   * lost answer, a crash): the intent committed, the transaction on the node, nothing recorded. The worker is
   * stopped while it is set up; `mined` mines the transaction.
   */
  async function unrecordedSend(mined: boolean) {
    const w = await liveWallet(ASSETS.ETH);
    await creditedDeposit(w.walletId, w.address, ETH);
    const dest = await addressBookEntry(ASSETS.ETH);
    await worker?.close();
    worker = undefined;
    const id = await withdraw(w.walletId, dest, '0.25');

    const account = await walletSigner(w.walletId);
    const nonce = Number(await node.rpc<string>('eth_getTransactionCount', [w.address, 'pending']));
    const fees = { maxFeePerGas: 20_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n };
    const raw = await account.signTransaction({
      chainId: 31337,
      type: 'eip1559',
      nonce,
      to: dest as `0x${string}`,
      value: ETH / 4n,
      gas: 21_000n,
      ...fees,
    });
    await sql(
      h,
      `INSERT INTO evm_send_intents (transaction_id, chain_id, from_address, nonce, tx_hash, raw_tx, gas_limit,
                                     max_fee_per_gas, max_priority_fee_per_gas)
       VALUES ($1, 31337, $2, $3, $4, $5, 21000, $6, $7)`,
      [
        id,
        w.address.toLowerCase(),
        nonce,
        keccak256(raw),
        raw,
        String(fees.maxFeePerGas),
        String(fees.maxPriorityFeePerGas),
      ],
    );
    const hash = await node.sendRaw(raw);
    if (mined) await node.mine(1);
    return { w, dest, id, nonce, hash };
  }

  /** Sent once: one transaction from the address, the amount arrived once, the intent gone, the ledger = chain. */
  async function sentOnce(s: Awaited<ReturnType<typeof unrecordedSend>>) {
    expect(Number(await node.rpc<string>('eth_getTransactionCount', [s.w.address, 'latest']))).toBe(
      s.nonce + 1,
    );
    expect(await node.balance(s.dest)).toBe(ETH / 4n);
    expect(await sql(h, 'SELECT 1 FROM evm_send_intents WHERE transaction_id = $1', [s.id])).toEqual([]);
    const fee = await feeOf(s.hash);
    expect(await ledgerMatches(s.w.walletId)).toMatchObject({
      total: String(ETH - ETH / 4n - fee),
      locked: '0',
    });
  }

  it.each(['pending', 'mined'])(
    'is found and recorded when %s: one transfer on the chain, Completed once, the hold not released early',
    async (state) => {
      const s = await unrecordedSend(state === 'mined');
      worker = await bootWorker(h, chainVars);
      const [done] = await settledWhileMining([s.id], 30_000);
      expect(done).toMatchObject({ status: 'Completed', txHash: s.hash });
      await sentOnce(s);
    },
    90_000,
  );

  it('cannot be cancelled (409, hold kept); the worker then records it and completes it, address-book entry deleted or not', async () => {
    const s = await unrecordedSend(false);
    // Where such an attempt leaves the withdrawal: PendingSignature (its step into it had committed).
    await sql(
      h,
      `UPDATE transactions SET status = 'PendingSignature', updated_at = now() - interval '1 minute' WHERE id = $1`,
      [s.id],
    );
    const refused = await live.post(`/transactions/${s.id}/cancel`).expect(409);
    expect(refused.body.message).toMatch(/may already be on the chain/);
    // An API role without the worker's CHAIN_EVM_* settings refuses it too: it still reads the EVM intents.
    const bare = await bootApi(h, { CUSTODY_RATE_LIMIT_PER_KEY: '100000' });
    try {
      await client(bare, liveKey).post(`/transactions/${s.id}/cancel`).expect(409);
    } finally {
      await bare.close();
    }
    expect(await tx(s.id)).toMatchObject({ status: 'PendingSignature', txHash: null });
    expect(await balanceOf(s.w.walletId)).toMatchObject({ available: '0.75', locked: '0.25' });
    // Its address-book entry deleted meanwhile: the send may be on the chain, so it is recorded, never failed.
    const book = await live.get(`/address-book?assetId=${ASSETS.ETH}`).expect(200);
    const entry = (book.body.items as { id: string; address: string }[]).find((e) => e.address === s.dest);
    await live.delete(`/address-book/${entry!.id}`).expect(204);

    // The worker's retry of the broadcast step (here the stuck-transaction sweeper's re-drive) records it.
    worker = await bootWorker(h, {
      ...chainVars,
      CUSTODY_SWEEP_AFTER_MS: '200',
      CUSTODY_SWEEP_INTERVAL_MS: '200',
    });
    const [done] = await settledWhileMining([s.id], 30_000);
    expect(done).toMatchObject({ status: 'Completed', txHash: s.hash });
    await sentOnce(s);
    await worker.close();
    worker = await bootWorker(h, chainVars);
  }, 90_000);

  it("a withdrawal is asked of its own chain only: a simulator withdrawal's cancel is not refused by an EVM intent (decision 0453)", async () => {
    const vault = await sandbox.post('/vaults', { externalId: 'sbx-cancel', name: 'Sandbox' }).expect(201);
    const wallet = (
      await sandbox.post(`/vaults/${vault.body.id}/wallets`, { assetId: ASSETS.ETH }).expect(201)
    ).body.walletId as string;
    const dep = await sandbox.post('/sandbox/deposits', { walletId: wallet, amount: '1' }).expect(201);
    await until(
      () => sandbox.get(`/transactions/${dep.body.transactionId}`).then((r) => r.body),
      (t) => t.status === 'Completed',
    );
    const dest = privateKeyToAccount(generatePrivateKey()).address;
    await sandbox.post('/address-book', { assetId: ASSETS.ETH, address: dest, label: 'Sim' }).expect(201);
    await worker?.close();
    worker = undefined;
    const id = (
      await sandbox
        .post(
          '/transactions/withdraw',
          { sourceWalletId: wallet, destinationAddress: dest, amount: '0.5' },
          { 'Idempotency-Key': newIdempotencyKey() },
        )
        .expect(201)
    ).body.transactionId as string;
    // A stray row of the EVM chain's table for it: the simulator never writes one, and is the chain asked.
    await sql(
      h,
      `INSERT INTO evm_send_intents (transaction_id, chain_id, from_address, nonce, tx_hash, raw_tx, gas_limit,
                                     max_fee_per_gas, max_priority_fee_per_gas)
       VALUES ($1, 31337, $2, 0, '0x00', '0x00', 21000, 1, 1)`,
      [id, dest.toLowerCase()],
    );
    try {
      const cancelled = await sandbox.post(`/transactions/${id}/cancel`).expect(200);
      expect(cancelled.body.status).toBe('Cancelled');
    } finally {
      await sql(h, 'DELETE FROM evm_send_intents WHERE transaction_id = $1', [id]);
      worker = await bootWorker(h, chainVars);
    }
  }, 60_000);
});

describe('a fee bump that was never recorded (decision 0449)', () => {
  /** A worker that never bumps on its own: what the test leaves is the only replacement. */
  const patient = () => bootWorker(h, { ...chainVars, CHAIN_EVM_STUCK_AFTER_MS: '600000' });

  /**
   * What a bump leaves when the node took (or was about to take) its replacement and its database transaction then
   * rolled back (a lost answer, a crash): the original recorded and unmined, the replacement's intent committed,
   * the replacement on the node (`pending`), mined (`mined`), or not sent yet (`never sent`), nothing else
   * recorded. Blocks are mined only by hand until `automine(true)`.
   */
  async function unrecordedBump(state: string) {
    const w = await liveWallet(ASSETS.ETH);
    await creditedDeposit(w.walletId, w.address, ETH);
    const dest = await addressBookEntry(ASSETS.ETH);
    await worker?.close();
    worker = await patient();
    await node.automine(false);
    const id = await withdraw(w.walletId, dest, '0.25');
    const first = await until(
      () => tx(id),
      (t) => t.status === 'Broadcasting',
    );
    await worker.close();
    worker = undefined;
    const [sent] = await sql<{ nonce: string; fee: string; tip: string }>(
      h,
      `SELECT nonce::text, max_fee_per_gas::text AS fee, max_priority_fee_per_gas::text AS tip
         FROM evm_transfers WHERE transaction_id = $1`,
      [id],
    );
    const account = await walletSigner(w.walletId);
    const nonce = Number(sent.nonce);
    const fees = { maxFeePerGas: 2n * BigInt(sent.fee), maxPriorityFeePerGas: 2n * BigInt(sent.tip) };
    const raw = await account.signTransaction({
      chainId: 31337,
      type: 'eip1559',
      nonce,
      to: dest as `0x${string}`,
      value: ETH / 4n,
      gas: 21_000n,
      ...fees,
    });
    const hash = keccak256(raw);
    await sql(
      h,
      `INSERT INTO evm_send_intents (transaction_id, chain_id, from_address, nonce, tx_hash, raw_tx, gas_limit,
                                     max_fee_per_gas, max_priority_fee_per_gas)
       VALUES ($1, 31337, $2, $3, $4, $5, 21000, $6, $7)`,
      [
        id,
        w.address.toLowerCase(),
        nonce,
        hash,
        raw,
        String(fees.maxFeePerGas),
        String(fees.maxPriorityFeePerGas),
      ],
    );
    if (state !== 'never sent') expect(await node.sendRaw(raw)).toBe(hash);
    if (state === 'mined') await node.mine(1);
    return { w, dest, id, nonce, hash, first: first.txHash as string, maxFee: 21_000n * fees.maxFeePerGas };
  }

  it.each(['pending', 'mined', 'never sent'])(
    'is found when %s: recorded beside the original, Completed with it once, its fee held and posted',
    async (state) => {
      let s: Awaited<ReturnType<typeof unrecordedBump>>;
      try {
        s = await unrecordedBump(state);
        // The restarted worker settles the replacement before anything is mined (the original could be).
        worker = await patient();
        await until(
          () => tx(s.id),
          (t) => t.txHash === s.hash,
          20_000,
        );
        const [row] = await sql<{ sent_hashes: string[]; fee_held: string }>(
          h,
          `SELECT sent_hashes, fee_held::text FROM evm_transfers WHERE transaction_id = $1`,
          [s.id],
        );
        expect(row).toEqual({ sent_hashes: [s.first, s.hash], fee_held: String(s.maxFee) });
        expect(await balanceOf(s.w.walletId)).toMatchObject({
          available: formatWei(ETH - ETH / 4n - s.maxFee),
          locked: formatWei(ETH / 4n + s.maxFee),
        });
      } finally {
        await node.automine(true);
      }
      const [done] = await settledWhileMining([s.id], 30_000);
      expect(done).toMatchObject({ status: 'Completed', txHash: s.hash });
      expect(await node.rpc('eth_getTransactionReceipt', [s.first])).toBeNull();
      expect(Number(await node.rpc<string>('eth_getTransactionCount', [s.w.address, 'latest']))).toBe(
        s.nonce + 1,
      );
      expect(await node.balance(s.dest)).toBe(ETH / 4n);
      expect(await sql(h, 'SELECT 1 FROM evm_send_intents WHERE transaction_id = $1', [s.id])).toEqual([]);
      const fee = await feeOf(s.hash);
      expect(done.networkFee).toBe(formatWei(fee));
      expect(await ledgerMatches(s.w.walletId)).toMatchObject({
        total: String(ETH - ETH / 4n - fee),
        locked: '0',
      });
    },
    90_000,
  );

  it('a replacement the node never took, once another version is mined, is dropped; the mined one settles', async () => {
    let s: Awaited<ReturnType<typeof unrecordedBump>>;
    try {
      s = await unrecordedBump('never sent');
      await node.mine(1); // the original is mined: the replacement's nonce is spent
    } finally {
      await node.automine(true);
    }
    worker = await patient();
    const [done] = await settledWhileMining([s.id], 30_000);
    expect(done).toMatchObject({ status: 'Completed', txHash: s.first });
    expect(await sql(h, 'SELECT 1 FROM evm_send_intents WHERE transaction_id = $1', [s.id])).toEqual([]);
    const [row] = await sql<{ sent_hashes: string[] }>(
      h,
      'SELECT sent_hashes FROM evm_transfers WHERE transaction_id = $1',
      [s.id],
    );
    expect(row.sent_hashes).toEqual([s.first]);
    expect(await ledgerMatches(s.w.walletId)).toMatchObject({
      total: String(ETH - ETH / 4n - (await feeOf(s.first))),
      locked: '0',
    });
    await worker.close();
    worker = await bootWorker(h, chainVars);
  }, 90_000);
});

describe('a gas top-up that was never recorded (decision 0451)', () => {
  const GWEI = 10n ** 9n;
  const TOP_UP = ETH / 1000n;

  /**
   * What a top-up leaves when the node took (or was about to take) it and the database transaction recording it
   * then never committed (a lost answer, a crash): its intent committed under the station's stored nonce, which
   * did not move. `pending`: the top-up is on the node, unmined; `mined`: mined; `nonce spent`: never sent, and
   * another transaction of the station took its nonce on the chain (nothing recorded that either); `never sent`:
   * never sent, its nonce still free (the crash came between the intent's commit and the send). Then a USDT
   * withdrawal from a fresh address that needs gas, requested while the worker is stopped.
   */
  async function unrecordedTopUp(state: 'pending' | 'mined' | 'nonce spent' | 'never sent') {
    const w = await liveWallet(ASSETS.USDT);
    await creditedDeposit(w.walletId, w.address, 100n * USDT, true);
    const dest = await addressBookEntry(ASSETS.USDT);
    expect(await node.balance(w.address)).toBe(0n);
    await worker?.close();
    worker = undefined;

    const [tenant] = await sql<{ seed: string }>(
      h,
      'SELECT hd_seed_sealed AS seed FROM tenants WHERE id = $1',
      [tenantId],
    );
    const station = new EvmKeys(h.env.env.SECRETS_MASTER_KEY!).account(
      tenantId,
      tenant.seed,
      gasStationPath('production'),
    );
    await node.rpc('hardhat_setBalance', [station.address, `0x${ETH.toString(16)}`]);
    // The station's history recorded up to here: the stored nonce is the chain's.
    const nonce = Number(await node.rpc<string>('eth_getTransactionCount', [station.address, 'pending']));
    await sql(
      h,
      `INSERT INTO evm_nonces (chain_id, address, next_nonce) VALUES (31337, $1, $2)
       ON CONFLICT (chain_id, address) DO UPDATE SET next_nonce = EXCLUDED.next_nonce`,
      [station.address.toLowerCase(), nonce],
    );
    // Generous fees, as an estimate taken a little earlier may be: a later top-up's cannot replace it.
    const topUp = (to: string) =>
      station.signTransaction({
        chainId: 31337,
        type: 'eip1559',
        nonce,
        to: to as `0x${string}`,
        value: TOP_UP,
        gas: 21_000n,
        maxFeePerGas: 100n * GWEI,
        maxPriorityFeePerGas: 2n * GWEI,
      });
    // The address of the withdrawal whose step crashed.
    const funded = privateKeyToAccount(generatePrivateKey()).address;
    const raw = await topUp(funded);
    const hash = keccak256(raw);
    await sql(
      h,
      `INSERT INTO evm_gas_top_up_intents (chain_id, station_address, nonce, tx_hash, raw_tx, to_address, value)
       VALUES (31337, $1, $2, $3, $4, $5, $6)`,
      [station.address.toLowerCase(), nonce, hash, raw, funded.toLowerCase(), String(TOP_UP)],
    );
    if (state === 'pending') {
      await node.automine(false);
      try {
        expect(await node.sendRaw(raw)).toBe(hash);
      } finally {
        await node.automine(true);
      }
      expect(await node.rpc('eth_getTransactionReceipt', [hash])).toBeNull();
    } else if (state === 'mined') {
      expect(await node.sendRaw(raw)).toBe(hash);
      await node.mine(1);
    } else if (state === 'nonce spent') {
      await node.sendRaw(await topUp(privateKeyToAccount(generatePrivateKey()).address));
    }
    const id = await withdraw(w.walletId, dest, '40');
    return { w, dest, id, station: station.address, nonce, hash, funded };
  }

  /** The withdrawal completes; the station sent two transactions under consecutive nonces, all recorded. */
  async function completes(s: Awaited<ReturnType<typeof unrecordedTopUp>>) {
    worker = await bootWorker(h, chainVars);
    const [done] = await settledWhileMining([s.id], 30_000);
    expect(done).toMatchObject({ status: 'Completed', failureReason: null });
    expect(await node.tokenBalance(s.dest)).toBe(40n * USDT);
    expect(Number(await node.rpc<string>('eth_getTransactionCount', [s.station, 'latest']))).toBe(
      s.nonce + 2,
    );
    const [stored] = await sql<{ next: string }>(
      h,
      'SELECT next_nonce::text AS next FROM evm_nonces WHERE chain_id = 31337 AND address = $1',
      [s.station.toLowerCase()],
    );
    expect(Number(stored.next)).toBe(s.nonce + 2);
    expect(await sql(h, 'SELECT 1 FROM evm_gas_top_up_intents')).toEqual([]);
    expect(await ledgerMatches(s.w.walletId)).toMatchObject({ total: String(60n * USDT), locked: '0' });
  }

  it.each(['pending', 'mined'] as const)(
    'is found when %s and recorded: the next USDT withdrawal still gets its gas and completes',
    async (state) => {
      const s = await unrecordedTopUp(state);
      await completes(s);
      // The earlier top-up arrived, once.
      expect(await node.balance(s.funded)).toBe(TOP_UP);
    },
    90_000,
  );

  it('a top-up never sent whose nonce is still free is dropped, not sent late; the next top-up takes its nonce (decision 0454)', async () => {
    const s = await unrecordedTopUp('never sent');
    worker = await bootWorker(h, chainVars);
    const [done] = await settledWhileMining([s.id], 30_000);
    expect(done).toMatchObject({ status: 'Completed', failureReason: null });
    expect(await node.tokenBalance(s.dest)).toBe(40n * USDT);
    // The address of the crashed step's withdrawal got nothing: the station sent one transaction, this withdrawal's.
    expect(await node.balance(s.funded)).toBe(0n);
    expect(await node.rpc('eth_getTransactionByHash', [s.hash])).toBeNull();
    expect(Number(await node.rpc<string>('eth_getTransactionCount', [s.station, 'latest']))).toBe(
      s.nonce + 1,
    );
    const [stored] = await sql<{ next: string }>(
      h,
      'SELECT next_nonce::text AS next FROM evm_nonces WHERE chain_id = 31337 AND address = $1',
      [s.station.toLowerCase()],
    );
    expect(Number(stored.next)).toBe(s.nonce + 1);
    expect(await sql(h, 'SELECT 1 FROM evm_gas_top_up_intents')).toEqual([]);
    expect(await ledgerMatches(s.w.walletId)).toMatchObject({ total: String(60n * USDT), locked: '0' });
  }, 90_000);

  it('a watcher round asks for a bounded number of stations with intents, each once, lowest first (decision 0454)', async () => {
    // Another chain id than the watcher's, so no round settles these while the test reads them.
    const chainId = 999;
    const stations = ['0x' + 'c'.repeat(40), '0x' + 'a'.repeat(40), '0x' + 'b'.repeat(40)];
    const rows = [...stations.map((s) => [s, 1]), [stations[1], 2]] as [string, number][];
    for (const [station, nonce] of rows) {
      await sql(
        h,
        `INSERT INTO evm_gas_top_up_intents (chain_id, station_address, nonce, tx_hash, raw_tx, to_address, value)
         VALUES ($1, $2, $3, '0x00', '0x00', $2, 1)`,
        [chainId, station, nonce],
      );
    }
    try {
      const repository = worker!.get(EvmRepository);
      const sorted = [...stations].sort();
      expect(await repository.gasStationsWithTopUpIntents(chainId, 2)).toEqual(sorted.slice(0, 2));
      expect(await repository.gasStationsWithTopUpIntents(chainId, 100)).toEqual(sorted);
      expect(await repository.gasStationsWithTopUpIntents(31338, 100)).toEqual([]);
    } finally {
      await sql(h, 'DELETE FROM evm_gas_top_up_intents WHERE chain_id = $1', [chainId]);
    }
  });

  it('a top-up never sent, whose nonce another transaction took, is dropped; the next top-up takes the next nonce', async () => {
    const s = await unrecordedTopUp('nonce spent');
    await completes(s);
    expect(await node.rpc('eth_getTransactionByHash', [s.hash])).toBeNull();
    expect(await node.balance(s.funded)).toBe(0n);
  }, 90_000);
});

// Last in this file: the second test replaces the node.
describe('the chain behind the node (decision 0467)', () => {
  /** The watcher's round, until it runs (another worker may hold the watcher's lock at that instant). */
  const roundError = (app: NestFastifyApplication) =>
    until(
      () =>
        app
          .get(EvmWatcher)
          .round()
          .then(
            () => undefined,
            (err: Error) => err.message,
          ),
      (message) => message !== undefined,
    );

  it('a node with another genesis under a non-local chain id is refused: nothing scanned, sent or forgotten', async () => {
    // A live wallet with a credited deposit, then this file's worker is stopped: only the misdirected one runs.
    const w = await liveWallet(ASSETS.ETH);
    await creditedDeposit(w.walletId, w.address, ETH);
    await worker?.close();
    worker = undefined;
    const other = await startHardhat({ chainId: 1337 });
    let otherWorker: NestFastifyApplication | undefined;
    const recorded = `0x${'ab'.repeat(32)}`;
    try {
      await sql(h, `INSERT INTO evm_chains (chain_id, genesis_hash) VALUES (1337, $1)`, [recorded]);
      // The address holds ETH on that node too, so only the genesis check stands between it and a send.
      await other.receiptOf(await other.sendRaw(await other.signTransfer(w.address, ETH)));
      otherWorker = await bootWorker(h, {
        ...chainVars,
        CHAIN_EVM_RPC_URL: other.url,
        CHAIN_EVM_CHAIN_ID: '1337',
        CHAIN_EVM_USDT_CONTRACT: other.usdt,
      });
      const genesis = await other.rpc<{ hash: string }>('eth_getBlockByNumber', ['0x0', false]);
      expect(await roundError(otherWorker)).toBe(
        `The node's genesis block is ${genesis.hash}, but chain 1337 in this database began with ${recorded}: ` +
          'CHAIN_EVM_RPC_URL points at another chain; nothing was scanned or sent',
      );
      const id = await withdraw(w.walletId, await addressBookEntry(ASSETS.ETH), '0.5');
      // Long enough for the worker to have signed and sent it had it not checked (it sends within ~100 ms).
      await new Promise((r) => setTimeout(r, 3_000));
      expect((await tx(id)).status).not.toMatch(/Broadcasting|Confirming|Completed|Failed/);
      expect(await other.rpc<string>('eth_getTransactionCount', [w.address, 'pending'])).toBe('0x0');
      const counts = await sql<{ cursors: number; transfers: number }>(
        h,
        `SELECT (SELECT count(*)::int FROM evm_cursors WHERE chain_id = 1337) AS cursors,
                (SELECT count(*)::int FROM evm_transfers WHERE chain_id = 1337) AS transfers`,
      );
      expect(counts).toEqual([{ cursors: 0, transfers: 0 }]);
      expect(await sql(h, `SELECT genesis_hash FROM evm_chains WHERE chain_id = 1337`)).toEqual([
        { genesis_hash: recorded },
      ]);
      await live.post(`/transactions/${id}/cancel`).expect(200);
    } finally {
      await otherWorker?.close();
      await other.stop();
      worker = await bootWorker(h, chainVars);
    }
  }, 90_000);

  it('a restarted local node: open transfers Failed and released, credits kept, the new chain scanned from block 0 and sent to from nonce 0', async () => {
    const w = await liveWallet(ASSETS.ETH);
    // A credited deposit, whose signed transaction is sent again on the new chain below.
    const raw = await node.signTransfer(w.address, ETH);
    const creditedHash = await node.sendRaw(raw);
    const seen = await until(
      () => depositsOf(w.walletId).then((d) => d.find((t) => t.txHash === creditedHash)),
      (t) => t?.status === 'Confirming',
    );
    await node.mine(THRESHOLD - 1);
    await until(
      () => tx(seen.transactionId),
      (t) => t.status === 'Completed',
    );
    const { nonce: creditedNonce } = await node.rpc<{ nonce: string }>('eth_getTransactionByHash', [
      creditedHash,
    ]);
    // A deposit still confirming, and a withdrawal sent but never mined.
    const pendingHash = await node.sendRaw(await node.signTransfer(w.address, ETH / 2n));
    const pending = await until(
      () => depositsOf(w.walletId).then((d) => d.find((t) => t.txHash === pendingHash)),
      (t) => t?.status === 'Confirming',
    );
    const dest = await addressBookEntry(ASSETS.ETH);
    await node.automine(false);
    const unmined = await withdraw(w.walletId, dest, '0.25');
    await until(
      () => tx(unmined),
      (t) => t.status === 'Broadcasting',
    );

    // The node restarts on the same URL: a new chain under the same id, this database kept.
    const { port } = node;
    await node.stop();
    node = await startHardhat({ port });

    const [deposit, withdrawal] = await Promise.all([
      until(
        () => tx(pending.transactionId),
        (t) => TERMINAL.includes(t.status),
      ),
      until(
        () => tx(unmined),
        (t) => TERMINAL.includes(t.status),
      ),
    ]);
    expect(deposit).toMatchObject({ status: 'Failed', failureReason: CHAIN_RESTARTED });
    expect(withdrawal).toMatchObject({ status: 'Failed', failureReason: CHAIN_RESTARTED });
    expect(await tx(seen.transactionId)).toMatchObject({ status: 'Completed' });
    expect(await ledgerMatches(w.walletId)).toMatchObject({
      total: String(ETH),
      available: String(ETH),
      pending: '0',
      locked: '0',
    });

    // The same signed deposit on the new chain has the same hash, and is a deposit of that chain: credited.
    await node.rpc('hardhat_setNonce', [FUNDER.address, creditedNonce]);
    expect(await node.sendRaw(raw)).toBe(creditedHash);
    const again = await until(
      () => depositsOf(w.walletId).then((d) => d.filter((t) => t.txHash === creditedHash)),
      (list) => list.some((t) => t.transactionId !== seen.transactionId && t.status === 'Confirming'),
    );
    await node.mine(THRESHOLD - 1);
    const credited = again.find((t) => t.transactionId !== seen.transactionId);
    await until(
      () => tx(credited.transactionId),
      (t) => t.status === 'Completed',
    );

    // A withdrawal on the new chain takes nonce 0 there and completes.
    const sent = await withdraw(w.walletId, dest, '0.25');
    const [done] = await settledWhileMining([sent], 30_000);
    expect(done).toMatchObject({ status: 'Completed' });
    const { nonce } = await node.rpc<{ nonce: string }>('eth_getTransactionByHash', [done.txHash]);
    expect(Number(nonce)).toBe(0);
    expect(await node.balance(dest)).toBe(ETH / 4n);
  }, 120_000);
});
