import { signRequest } from '@tessera/auth';
import { createHash } from 'node:crypto';
import request from 'supertest';
import {
  ASSETS,
  BASIC_SCOPES,
  type Client,
  client,
  createKey,
  createTenant,
  creditedWallet as creditedWalletFor,
  fundedWallet,
  type Harness,
  type KeyPair,
  newIdempotencyKey,
  sql,
  startHarness,
} from './support';

/**
 * Request bodies of the custody POSTs (decision 0477): the Idempotency-Key's "same body" is the body as sent, in
 * its canonical JSON form (RFC 8785), so fields the endpoint ignores count; an optional field sent as null is
 * the field left out.
 */

const BOOK_ADDRESS = 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx';
const MISMATCH = 'Idempotency-Key was already used with a different request body';

let h: Harness;
let key: KeyPair;
let api: Client;

beforeAll(async () => {
  h = await startHarness({}, { worker: false });
  key = await createKey(h.api, await createTenant(h.api), {
    scopes: [...BASIC_SCOPES, 'sandbox:write', 'webhooks:write'],
  });
  api = client(h.api, key);
  await api.post('/address-book', { assetId: ASSETS.BTC, address: BOOK_ADDRESS, label: 'Cold' }).expect(201);
});
afterAll(() => h?.close());

const creditedWallet = (amount: string) => creditedWalletFor(h, api, amount);

/** A signed POST whose body is exactly `raw` (whitespace and member order as written). */
function rawPost(path: string, raw: string, headers: Record<string, string>) {
  const signed = signRequest(key.apiKey, key.apiSecret, { method: 'POST', pathWithQuery: path, body: raw });
  let req = request(h.api.getHttpServer()).post(path);
  for (const [name, value] of Object.entries({ ...signed, ...headers })) req = req.set(name, value);
  return req.set('content-type', 'application/json').send(raw);
}

const transactionsFrom = (walletId: string) =>
  sql<{ n: number }>(h, 'SELECT count(*)::int AS n FROM transactions WHERE source_wallet_id = $1', [
    walletId,
  ]).then((rows) => rows[0]!.n);

describe('Idempotency-Key: the same body is the body as sent', () => {
  it('a repeat that adds a field the endpoint ignores is a different body (400), and nothing more is created', async () => {
    const a = await creditedWallet('1');
    const body = { sourceWalletId: a.walletId, destinationAddress: BOOK_ADDRESS, amount: '0.1' };
    const idem = { 'idempotency-key': newIdempotencyKey() };
    const first = await api.post('/transactions/withdraw', body, idem).expect(201);
    for (const extra of [{ tag: '7' }, { memo: 'invoice 12' }, { note2: null }, { amount2: '0.1' }]) {
      const res = await api.post('/transactions/withdraw', { ...body, ...extra }, idem);
      expect({ extra, status: res.status, message: res.body.message }).toEqual({
        extra,
        status: 400,
        message: MISMATCH,
      });
      expect(res.body.errors).toHaveProperty('Idempotency-Key');
    }
    // A field the schema would trim or normalise still counts as sent.
    await api
      .post('/transactions/withdraw', { ...body, destinationAddress: ` ${BOOK_ADDRESS}` }, idem)
      .expect(400);
    const again = await api.post('/transactions/withdraw', body, idem).expect(201);
    expect(again.body).toEqual(first.body);
    expect(await transactionsFrom(a.walletId)).toBe(1);
  });

  it('member order and whitespace do not make another body', async () => {
    const a = await creditedWallet('1');
    const b = await fundedWallet(api, ASSETS.BTC, undefined);
    const idem = { 'idempotency-key': newIdempotencyKey() };
    const first = await rawPost(
      '/transactions/transfer',
      `{"sourceWalletId":"${a.walletId}","destinationWalletId":"${b.walletId}","amount":"0.1","note":"rent"}`,
      idem,
    ).expect(201);
    const reordered = await rawPost(
      '/transactions/transfer',
      `{\n  "note" : "rent",\n  "amount": "0.1",\t"destinationWalletId": "${b.walletId}",\r\n "sourceWalletId":"${a.walletId}" }`,
      idem,
    ).expect(201);
    expect(reordered.body).toEqual(first.body);
    // Whitespace inside a value is part of it.
    const res = await rawPost(
      '/transactions/transfer',
      `{"sourceWalletId":"${a.walletId}","destinationWalletId":"${b.walletId}","amount":"0.1","note":"rent "}`,
      idem,
    );
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(MISMATCH);
    expect(await transactionsFrom(a.walletId)).toBe(1);
  });

  it('concurrent repeats under one key with two bodies: one transaction, one body answered 201, the other 400', async () => {
    const a = await creditedWallet('5');
    const b = await fundedWallet(api, ASSETS.BTC, undefined);
    const idem = { 'idempotency-key': newIdempotencyKey() };
    const plain = { sourceWalletId: a.walletId, destinationWalletId: b.walletId, amount: '0.3' };
    const extra = { ...plain, destinationTag: '12' };
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        api.post('/transactions/transfer', i % 2 ? extra : plain, idem).then((r) => ({ i, r })),
      ),
    );
    const winners = results.filter(({ r }) => r.status === 201);
    const losers = results.filter(({ r }) => r.status !== 201);
    expect(new Set(winners.map(({ i }) => i % 2)).size).toBe(1);
    expect(winners).toHaveLength(10);
    expect(new Set(winners.map(({ r }) => r.body.transactionId)).size).toBe(1);
    expect(losers.map(({ r }) => [r.status, r.body.message])).toEqual(Array(10).fill([400, MISMATCH]));
    expect(await transactionsFrom(a.walletId)).toBe(1);
    expect((await api.get(`/wallets/${a.walletId}/balance`)).body).toMatchObject({ total: '4.7' });
  });

  it('a key stored before decision 0477 (a hash of the parsed fields) still answers its identical repeat', async () => {
    const a = await creditedWallet('1');
    const b = await fundedWallet(api, ASSETS.BTC, undefined);
    const body = { sourceWalletId: a.walletId, destinationWalletId: b.walletId, amount: '0.1' };
    const idem = { 'idempotency-key': newIdempotencyKey() };
    const first = await api.post('/transactions/transfer', body, idem).expect(201);
    // What the code before stored: the parsed fields as sorted [name, value] pairs.
    const pairs = Object.entries(body).sort(([x], [y]) => (x < y ? -1 : 1));
    const legacy = createHash('sha256').update(JSON.stringify(pairs)).digest('hex');
    await sql(h, `UPDATE idempotency_keys SET request_hash = $1 WHERE key = $2`, [
      legacy,
      idem['idempotency-key'],
    ]);
    const again = await api.post('/transactions/transfer', body, idem).expect(201);
    expect(again.body).toEqual(first.body);
    await api.post('/transactions/transfer', { ...body, amount: '0.2' }, idem).expect(400);
    expect(await transactionsFrom(a.walletId)).toBe(1);
  });

  it('an unknown field nested deeper than the stack is a 400, not a 500', async () => {
    const a = await creditedWallet('1');
    const b = await fundedWallet(api, ASSETS.BTC, undefined);
    const deep = '['.repeat(200_000) + ']'.repeat(200_000);
    const res = await rawPost(
      '/transactions/transfer',
      `{"sourceWalletId":"${a.walletId}","destinationWalletId":"${b.walletId}","amount":"0.1","x":${deep}}`,
      { 'idempotency-key': newIdempotencyKey() },
    );
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: expect.any(String) });
    expect(await transactionsFrom(a.walletId)).toBe(0);
  });
});

describe('an optional field sent as null is the field left out', () => {
  it('transfer: note null is created with note null', async () => {
    const a = await creditedWallet('1');
    const b = await fundedWallet(api, ASSETS.BTC, undefined);
    const res = await api
      .post(
        '/transactions/transfer',
        { sourceWalletId: a.walletId, destinationWalletId: b.walletId, amount: '0.1', note: null },
        { 'idempotency-key': newIdempotencyKey() },
      )
      .expect(201);
    expect(res.body.note).toBeNull();
  });

  it('withdraw: destinationTag null and note null, on an asset without tags', async () => {
    const a = await creditedWallet('1');
    const res = await api
      .post(
        '/transactions/withdraw',
        {
          sourceWalletId: a.walletId,
          destinationAddress: BOOK_ADDRESS,
          destinationTag: null,
          amount: '0.1',
          note: null,
        },
        { 'idempotency-key': newIdempotencyKey() },
      )
      .expect(201);
    expect(res.body).toMatchObject({ destinationTag: null, note: null });
  });

  it('withdraw: destinationTag null on an asset that needs a tag is the missing tag (400)', async () => {
    const xrp = await fundedWallet(api, ASSETS.XRP, undefined);
    const res = await api
      .post(
        '/transactions/withdraw',
        {
          sourceWalletId: xrp.walletId,
          destinationAddress: 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh',
          destinationTag: null,
          amount: '1',
        },
        { 'idempotency-key': newIdempotencyKey() },
      )
      .expect(400);
    expect(res.body.errors).toEqual({ destinationTag: ['Required for this asset'] });
  });

  it('wallet label, address-book tag and sandbox deposit sourceAddress take null', async () => {
    const vault = await api.post('/vaults', { externalId: 'nulls', name: 'Nulls' }).expect(201);
    const wallet = await api
      .post(`/vaults/${vault.body.id}/wallets`, { assetId: 'ETH', label: null })
      .expect(201);
    expect(wallet.body.label).toBe('');
    const entry = await api
      .post('/address-book', {
        assetId: 'ETH',
        address: '0x52908400098527886E0F7030069857D2E4169EE7',
        tag: null,
        label: 'Null tag',
      })
      .expect(201);
    expect(entry.body.tag).toBeNull();
    await api
      .post('/sandbox/deposits', { walletId: wallet.body.walletId, amount: '1', sourceAddress: null })
      .expect(201);
  });

  it('a required field sent as null is still a 400 naming it', async () => {
    const res = await api.post('/vaults', { externalId: null, name: 'n' }).expect(400);
    expect(Object.keys(res.body.errors)).toEqual(['externalId']);
    const transfer = await api
      .post(
        '/transactions/transfer',
        { sourceWalletId: null, destinationWalletId: null, amount: null },
        { 'idempotency-key': newIdempotencyKey() },
      )
      .expect(400);
    expect(Object.keys(transfer.body.errors).sort()).toEqual([
      'amount',
      'destinationWalletId',
      'sourceWalletId',
    ]);
  });
});

describe('PUT /webhooks/outbound', () => {
  it('an empty subscribedEventTypes is a 400 saying how to subscribe to every type, not a subscription to nothing', async () => {
    const res = await api
      .put('/webhooks/outbound', { url: 'https://example.com/hook', subscribedEventTypes: [] })
      .expect(400);
    expect(res.body.errors).toEqual({
      subscribedEventTypes: [expect.stringMatching(/at least one event type; send null or leave it out/)],
    });
  });
});
