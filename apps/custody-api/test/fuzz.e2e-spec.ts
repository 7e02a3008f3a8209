import { signRequest } from '@tessera/auth';
import {
  type DispatcherProcess,
  describeFuzzVerdict,
  fuzzApi,
  type FuzzReport,
  startDispatcherProcess,
  TEST_ADMIN_TOKEN,
  SETUP_HOOK_TIMEOUT_MS,
} from '@tessera/testing';
import {
  ASSETS,
  client,
  createKey,
  createTenant,
  fundedWallet,
  type Harness,
  type KeyPair,
  startHarness,
} from './support';

/**
 * Issue 15, fuzz suite: 10,000 generated requests (fixed seed FUZZ_SEED, printed) over every route of the
 * custody API's route table, signed with a valid key so the handlers are reached. Zero 5xx; every 4xx is
 * `{message, errors?}` (a 429 is empty).
 */
const SEED = Number(process.env.FUZZ_SEED ?? 1795290015);
const RUNS = Number(process.env.FUZZ_RUNS ?? 10_000);

let h: Harness;
/** The real dispatcher answers the webhook routes over RPC, as in production. */
let dispatcher: DispatcherProcess;
let key: KeyPair;
const known: string[] = [];

beforeAll(async () => {
  h = await startHarness({ CUSTODY_RATE_LIMIT_PER_KEY: '10000000', LOG_LEVEL: 'silent' }, { worker: false });
  dispatcher = await startDispatcherProcess(h.env.env);
  const tenant = await createTenant(h.api);
  key = await createKey(h.api, tenant);
  const api = client(h.api, key);
  const wallet = await fundedWallet(api, ASSETS.BTC, undefined);
  known.push(wallet.vaultId, wallet.walletId, wallet.depositAddress, ...Object.values(ASSETS), 'BTC', 'XRP');
}, SETUP_HOOK_TIMEOUT_MS);
afterAll(async () => {
  await dispatcher?.stop();
  await h?.close();
});

describe('issue 15 regressions', () => {
  it('POST /vaults with a NUL in externalId is a 400 in the shape, not a 500', async () => {
    const res = await client(h.api, key).post('/vaults', { externalId: 'a\u0000b', name: 'n' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      message: 'The body contains a NUL character or invalid Unicode',
      errors: { body: ['The body contains a NUL character or invalid Unicode'] },
    });
  });

  it('a NUL in a path parameter is a 400 in the shape', async () => {
    const res = await client(h.api, key).get('/vaults/a%00b');
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('The path contains a NUL character or invalid Unicode');
  });
});

describe('fuzz', () => {
  let report: FuzzReport;

  beforeAll(async () => {
    report = await fuzzApi({
      app: h.api,
      shape: 'custody',
      runs: RUNS,
      seed: SEED,
      exclude: (r) => r.url.startsWith('/admin'),
      knownValues: known,
      fieldNames: [
        'externalId',
        'name',
        'assetId',
        'label',
        'address',
        'tag',
        'amount',
        'note',
        'walletId',
        'sourceWalletId',
        'destinationWalletId',
        'destinationAddress',
        'destinationTag',
        'sourceAddress',
        'url',
        'take',
        'cursor',
        'status',
        'type',
        'vaultId',
        'enabled',
        'events',
      ],
      authenticate: (req) =>
        signRequest(key.apiKey, key.apiSecret, {
          method: req.method,
          pathWithQuery: req.url,
          body: req.body ?? '',
        }),
    });
  }, 900_000);

  describeFuzzVerdict(() => report, {
    runs: RUNS,
    seed: SEED,
    shapeTitle: "the custody contract's shape {message, errors?}",
    max401Share: 0.2,
    afterwards: () => client(h.api, key).get('/assets').expect(200),
  });
});

/**
 * The operator API (`/admin`, 12 routes, now in the OpenAPI document) under the same generator, with the
 * operator's bearer token: tenants, keys, assets, policies and reconciliations take bad input without a 5xx.
 */
describe('fuzz: operator API', () => {
  const OPERATOR_RUNS = Number(process.env.FUZZ_OPERATOR_RUNS ?? 2_000);
  let report: FuzzReport;

  beforeAll(async () => {
    const tenant = await createTenant(h.api, 'Fuzzed operator');
    report = await fuzzApi({
      app: h.api,
      shape: 'custody',
      runs: OPERATOR_RUNS,
      seed: SEED + 1,
      exclude: (r) => !r.url.startsWith('/admin'),
      knownValues: [tenant, ...known, 'test', 'live'],
      fieldNames: ['name', 'environment', 'scopes', 'ipAllowList', 'tenantId', 'take', 'cursor', 'maxAmount'],
      authenticate: () => ({ authorization: `Bearer ${TEST_ADMIN_TOKEN}` }),
    });
  }, 900_000);

  describeFuzzVerdict(() => report, {
    runs: OPERATOR_RUNS,
    seed: SEED + 1,
    shapeTitle: "the custody contract's shape {message, errors?}",
    max401Share: 0.2,
    afterwards: () => client(h.api, key).get('/assets').expect(200),
  });
});
