import { signRequest } from '@tessera/auth';
import request from 'supertest';
import {
  BASIC_SCOPES,
  type Client,
  client,
  createKey,
  createTenant,
  type Harness,
  type KeyPair,
  startHarness,
} from './support';

/**
 * Contract edges found by the custody contract review (decision 0473): bodies that are not JSON, page sizes that
 * are not decimal digits.
 */

let h: Harness;
let key: KeyPair;
let api: Client;

beforeAll(async () => {
  h = await startHarness({}, { worker: false });
  key = await createKey(h.api, await createTenant(h.api), {
    scopes: [...BASIC_SCOPES, 'webhooks:read'],
  });
  api = client(h.api, key);
});
afterAll(() => h?.close());

/** A signed POST /vaults whose body and Content-Type are exactly as given (the signature covers `body`). */
function rawPost(body: string, contentType: string | undefined, timestamp = String(Date.now())) {
  const headers = signRequest(key.apiKey, key.apiSecret, {
    method: 'POST',
    pathWithQuery: '/vaults',
    body,
    timestamp,
  });
  let req = request(h.api.getHttpServer()).post('/vaults');
  for (const [name, value] of Object.entries(headers)) req = req.set(name, value);
  if (contentType) req = req.set('content-type', contentType);
  return req.send(body);
}

describe('request bodies are JSON', () => {
  it('answers a correctly signed text/plain body with 415, not a signature failure', async () => {
    const res = await rawPost('{"externalId":"plain","name":"n"}', 'text/plain');
    expect(res.status).toBe(415);
    expect(res.body).toEqual({ message: expect.stringMatching(/application\/json/) });
  });

  it('does not act on a form-encoded body', async () => {
    const res = await rawPost('externalId=form&name=n', 'application/x-www-form-urlencoded');
    expect(res.status).toBe(415);
    const list = await api.get('/vaults').expect(200);
    expect(list.body.items.map((v: { externalId: string }) => v.externalId)).not.toContain('form');
  });

  it('still takes application/json with parameters, and a bodiless POST', async () => {
    const res = await rawPost('{"externalId":"json","name":"n"}', 'application/json; charset=utf-8');
    expect(res.status).toBe(201);
    const vault = res.body.id as string;
    const address = await api.post(`/wallets/00000000-0000-4000-8000-000000000000/addresses`);
    expect(address.status).toBe(404);
    expect(vault).toBeTruthy();
  });
});

describe('page sizes are decimal digits', () => {
  it.each(['/transactions?take', '/vaults?take', '/webhooks/deliveries?pageSize'])(
    '%s: hex, exponent, binary, sign and whitespace forms are a 400, not read as a number',
    async (prefix) => {
      const field = prefix.split('?')[1]!;
      for (const value of ['0x10', '1e2', '0b11', '%2B5', '%205']) {
        const res = await api.get(`${prefix}=${value}`);
        expect({ value, status: res.status, errors: Object.keys(res.body.errors ?? {}) }).toEqual({
          value,
          status: 400,
          errors: [field],
        });
      }
    },
  );

  it('still reads plain digits (a leading zero included) and refuses the maximum plus one', async () => {
    await api.get('/transactions?take=200').expect(200);
    await api.get('/transactions?take=020').expect(200);
    await api.get('/vaults?take=200').expect(200);
    const over = await api.get('/transactions?take=201').expect(400);
    expect(over.body.errors).toEqual({ take: ['take must be at most 200'] });
  });
});
