import { custodySignedHeaders, monotonicMsClock } from './custody-signing';
import type {
  AddressBookEntry,
  Asset,
  Balance,
  CatalogEntry,
  DeliveryDetail,
  DeliverySummary,
  Transaction,
  TransactionListQuery,
  TransferRequest,
  Vault,
  Wallet,
  WebhookConfiguration,
  WithdrawRequest,
} from './custody-models';
import { idempotencyKeyFor } from './idempotency';
import type { CustodyResult, ItemOf } from './openapi-types';
import { type CursorPage, PageIterator } from './pagination';
import { type ApiResponse, fillPath, type RequestSpec, Transport, type TransportOptions } from './transport';

export interface CustodyClientOptions extends TransportOptions {
  /** `X-API-Key`: `ck_test_…` (sandbox) or `ck_live_…`. */
  apiKey: string;
  /** The key's secret, shown once at issue. Used only to sign; never sent or logged. */
  apiSecret: string;
  /** Clock for `X-Timestamp` in ms (default Date.now); tests and skewed hosts may pass their own. */
  now?: () => number;
}

/** Options of a call that creates money movement: its idempotency key, reused on every retry. */
export interface IdempotentCallOptions {
  /** `Idempotency-Key` (1–64 of `A-Za-z0-9_-`). Omitted: a random UUID generated once for this call. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

export interface CallOptions {
  signal?: AbortSignal;
}

type TransactionOut = CustodyResult<'/transactions/{id}', 'get', Transaction>;
type TransactionPage = CustodyResult<'/transactions', 'get', CursorPage<Transaction>>;
type VaultPage = CustodyResult<'/vaults', 'get', CursorPage<Vault>>;
type DeliveryPage = CustodyResult<'/webhooks/deliveries', 'get', CursorPage<DeliverySummary>>;

export type CustodyClient = ReturnType<typeof createCustodyClient>;

/**
 * The custody API client. Every try is signed afresh (`X-Timestamp` in ms from a clock that never repeats,
 * so no (key, timestamp, signature) tuple is ever sent twice); a 401 is re-signed once; 429 and 502/503/504
 * back off as the contract advises; transfers and withdrawals carry one idempotency key across their retries.
 */
export function createCustodyClient(options: CustodyClientOptions) {
  if (!options.apiKey || !options.apiSecret) throw new TypeError('apiKey and apiSecret are required');
  const credentials = { apiKey: options.apiKey, apiSecret: options.apiSecret };
  const clock = monotonicMsClock(options.now);
  const transport = new Transport(options, {
    resignOn401: true,
    headers: (method, pathWithQuery, rawBody) =>
      custodySignedHeaders(credentials, clock(), method, pathWithQuery, rawBody),
  });
  const call = async <T>(spec: RequestSpec): Promise<T> => (await transport.request<T>(spec)).data;
  const path = fillPath;

  const pages = <Item>(
    template: string,
    query: Record<string, string | number | undefined>,
    sizeParam: 'take' | 'pageSize',
  ) =>
    new PageIterator<Item>((cursor) =>
      call<CursorPage<Item>>({
        method: 'GET',
        path: template,
        query: { ...query, cursor, [sizeParam]: query[sizeParam] },
      }),
    );

  return {
    /** Any signed call the typed surface does not cover yet (same signing, retries and errors). */
    request: <T = unknown>(spec: RequestSpec): Promise<ApiResponse<T>> => transport.request<T>(spec),

    assets: {
      list: (o: CallOptions = {}) =>
        call<CustodyResult<'/assets', 'get', { items: Asset[] }>>({ method: 'GET', path: '/assets', ...o }),
    },

    vaults: {
      create: (body: { externalId: string; name: string }, o: CallOptions = {}) =>
        call<CustodyResult<'/vaults', 'post', Vault>>({ method: 'POST', path: '/vaults', body, ...o }),
      get: (vaultId: string, o: CallOptions = {}) =>
        call<CustodyResult<'/vaults/{vaultId}', 'get', Vault>>({
          method: 'GET',
          path: path('/vaults/{vaultId}', { vaultId }),
          ...o,
        }),
      /** Every vault, page by page (`take` is the page size). */
      list: (query: { take?: number } = {}) => pages<ItemOf<VaultPage, Vault>>('/vaults', query, 'take'),
      wallets: (vaultId: string, o: CallOptions = {}) =>
        call<CustodyResult<'/vaults/{vaultId}/wallets', 'get', { items: Wallet[] }>>({
          method: 'GET',
          path: path('/vaults/{vaultId}/wallets', { vaultId }),
          ...o,
        }),
    },

    wallets: {
      create: (vaultId: string, body: { assetId: string; label?: string }, o: CallOptions = {}) =>
        call<CustodyResult<'/vaults/{vaultId}/wallets', 'post', Wallet>>({
          method: 'POST',
          path: path('/vaults/{vaultId}/wallets', { vaultId }),
          body,
          ...o,
        }),
      get: (id: string, o: CallOptions = {}) =>
        call<CustodyResult<'/wallets/{id}', 'get', Wallet>>({
          method: 'GET',
          path: path('/wallets/{id}', { id }),
          ...o,
        }),
      balance: (id: string, o: CallOptions = {}) =>
        call<CustodyResult<'/wallets/{id}/balance', 'get', Balance>>({
          method: 'GET',
          path: path('/wallets/{id}/balance', { id }),
          ...o,
        }),
      addAddress: (id: string, o: CallOptions = {}) =>
        call<CustodyResult<'/wallets/{id}/addresses', 'post', Record<string, unknown>>>({
          method: 'POST',
          path: path('/wallets/{id}/addresses', { id }),
          ...o,
        }),
    },

    transactions: {
      /** Internal transfer. One idempotency key per call, reused by every retry of it. */
      transfer: (body: TransferRequest, o: IdempotentCallOptions = {}) =>
        call<CustodyResult<'/transactions/transfer', 'post', Transaction>>({
          method: 'POST',
          path: '/transactions/transfer',
          body,
          idempotencyKey: idempotencyKeyFor(o.idempotencyKey),
          signal: o.signal,
        }),
      /** Withdrawal to an address-book destination. One idempotency key per call, reused by every retry. */
      withdraw: (body: WithdrawRequest, o: IdempotentCallOptions = {}) =>
        call<CustodyResult<'/transactions/withdraw', 'post', Transaction>>({
          method: 'POST',
          path: '/transactions/withdraw',
          body,
          idempotencyKey: idempotencyKeyFor(o.idempotencyKey),
          signal: o.signal,
        }),
      get: (id: string, o: CallOptions = {}) =>
        call<TransactionOut>({ method: 'GET', path: path('/transactions/{id}', { id }), ...o }),
      /** `for await (const tx of client.transactions.list({ vaultId }))`: newest first, every page. */
      list: (query: TransactionListQuery = {}) =>
        pages<ItemOf<TransactionPage, Transaction>>('/transactions', { ...query }, 'take'),
      cancel: (id: string, o: CallOptions = {}) =>
        call<CustodyResult<'/transactions/{id}/cancel', 'post', Transaction>>({
          method: 'POST',
          path: path('/transactions/{id}/cancel', { id }),
          ...o,
        }),
    },

    addressBook: {
      create: (
        body: { assetId: string; address: string; tag?: string; label: string },
        o: CallOptions = {},
      ) =>
        call<CustodyResult<'/address-book', 'post', AddressBookEntry>>({
          method: 'POST',
          path: '/address-book',
          body,
          ...o,
        }),
      list: (query: { assetId?: string } = {}, o: CallOptions = {}) =>
        call<CustodyResult<'/address-book', 'get', { items: AddressBookEntry[] }>>({
          method: 'GET',
          path: '/address-book',
          query,
          ...o,
        }),
      get: (id: string, o: CallOptions = {}) =>
        call<CustodyResult<'/address-book/{id}', 'get', AddressBookEntry>>({
          method: 'GET',
          path: path('/address-book/{id}', { id }),
          ...o,
        }),
      delete: (id: string, o: CallOptions = {}) =>
        call<unknown>({ method: 'DELETE', path: path('/address-book/{id}', { id }), ...o }),
    },

    webhooks: {
      /**
       * Sets the endpoint. The answer carries `signingSecret` only when a secret was generated (first set-up,
       * a new URL, or a secret whose answer never reached the API): keep it. Not retried by the client; after a
       * 5xx, call it again: a secret the API never handed over is replaced and returned (decision 0448).
       */
      configure: (body: { url: string; subscribedEventTypes?: string[] | null }, o: CallOptions = {}) =>
        call<WebhookConfiguration>({ method: 'PUT', path: '/webhooks/outbound', body, ...o }),
      get: (o: CallOptions = {}) =>
        call<WebhookConfiguration>({ method: 'GET', path: '/webhooks/outbound', ...o }),
      /** Sends a synthetic `webhook.test`, signed like real events. */
      sendTest: (o: CallOptions = {}) =>
        call<unknown>({ method: 'POST', path: '/webhooks/outbound/test', ...o }),
      catalog: (o: CallOptions = {}) =>
        call<CatalogEntry[]>({ method: 'GET', path: '/webhooks/events/catalog', ...o }),
      deliveries: {
        list: (query: { pageSize?: number; status?: DeliverySummary['status'] } = {}) =>
          pages<ItemOf<DeliveryPage, DeliverySummary>>('/webhooks/deliveries', { ...query }, 'pageSize'),
        get: (id: string, o: CallOptions = {}) =>
          call<DeliveryDetail>({ method: 'GET', path: path('/webhooks/deliveries/{id}', { id }), ...o }),
        retry: (id: string, o: CallOptions = {}) =>
          call<unknown>({ method: 'POST', path: path('/webhooks/deliveries/{id}/retry', { id }), ...o }),
      },
    },

    sandbox: {
      /** Sandbox keys only: injects an on-chain deposit that then moves through the statuses. */
      deposit: (body: { walletId: string; amount: string; sourceAddress?: string }, o: CallOptions = {}) =>
        call<CustodyResult<'/sandbox/deposits', 'post', Transaction>>({
          method: 'POST',
          path: '/sandbox/deposits',
          body,
          ...o,
        }),
    },
  };
}
