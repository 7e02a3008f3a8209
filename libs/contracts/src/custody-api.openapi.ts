import { z } from 'zod';
import {
  addedAddressResponse,
  addressBookEntryResponse,
  addressBookList,
  assetList,
  balanceResponse,
  createAddressBookEntrySchema,
  createVaultSchema,
  createWalletSchema,
  custodyError,
  idempotencyHeaders,
  listAddressBookSchema,
  listTransactionsSchema,
  listVaultsSchema,
  sandboxDepositSchema,
  transactionPage,
  transactionResponse,
  transferSchema,
  vaultPage,
  vaultResponse,
  walletDetailResponse,
  walletList,
  walletResponse,
  withdrawSchema,
} from './custody-api';
import { CUSTODY_OPERATOR_ROUTES } from './custody-operator.openapi';
import { approveWithdrawalInput, rejectWithdrawalInput, withdrawalPolicyView } from './custody-policies';
import {
  named,
  okResponse as ok,
  OpenApiBuilder,
  type ResponseSpec,
  type RouteSpec,
} from './openapi-builder';
import { registerWebhookEvents, registerWebhookRoutes } from './openapi-webhooks';

/**
 * The OpenAPI 3.1 document of the custody API (docs/openapi/custody-api.json): the signed partner API and,
 * under the `operator` tag, the operator API (/admin, bearer ADMIN_TOKEN; custody-operator.openapi.ts).
 */

const error = named('Error', custodyError);
const fail = (description: string): ResponseSpec => ({ description, body: error });

/** A 429: an empty body and an integer Retry-After. */
const tooMany = (description: string, retryAfter: string): ResponseSpec => ({
  description,
  content: {},
  headers: {
    'Retry-After': { description: retryAfter, schema: { type: 'integer', minimum: 0 }, required: true },
  },
});

const RESPONSES: Record<string, ResponseSpec> = {
  BadRequest: fail(
    'Malformed request, a field problem (`errors` names the fields), the same Idempotency-Key with another body, or a page size above the maximum',
  ),
  Unauthorized: fail(
    'Bad signature, clock drift over 30 s, a replayed (key, timestamp, signature), or an unknown or revoked key: re-sign and retry once',
  ),
  Forbidden: fail(
    "Missing scope, a caller IP outside the key's allow-list, or a live key on a sandbox-only call",
  ),
  NotFound: fail('The id is wrong or belongs to another tenant'),
  Conflict: fail('The resource exists already, or its state no longer allows the call: look it up'),
  TooManyRequests: tooMany(
    'Rate limit exceeded (120 per minute per key; 60 per minute per IP when anonymous). Empty body.',
    'Seconds to wait (a hint): sleep it, else back off exponentially with jitter up to 30 s',
  ),
  PayloadTooLarge: fail('The body is over 1 MiB; nothing is done'),
  UnsupportedMediaType: fail(
    'The body is not JSON (`Content-Type: application/json`); refused before the signature is checked',
  ),
  ServerError: fail('Server error; retry sparingly'),
  BadGateway: fail('Custody backend failure; retry with back-off'),
  // The operator API's own (custody-operator.openapi.ts).
  OperatorUnauthorized: fail('Missing or wrong `Authorization: Bearer $ADMIN_TOKEN`'),
  OperatorTooManyRequests: tooMany(
    'Too many wrong operator tokens from this IP (CUSTODY_AUTH_FAILURES_PER_IP a minute). Empty body.',
    'Seconds until the window lets a token be tried again',
  ),
};

/** What every signed call can answer besides its own codes. */
const SIGNED = {
  401: 'Unauthorized',
  403: 'Forbidden',
  429: 'TooManyRequests',
  500: 'ServerError',
  502: 'BadGateway',
};

const id = (description: string) => z.object({ id: z.string().uuid().describe(description) });
const vaultId = z.object({ vaultId: z.string().uuid() });

type Route = Omit<RouteSpec, 'security' | 'responses'> & { responses: RouteSpec['responses'] };

/** One signed partner operation: `X-API-Key`, `X-Timestamp` and `X-Signature` together, and a scope. */
const signed = (scope: string, route: Route): RouteSpec => ({
  ...route,
  description: [route.description, `Scope: \`${scope}\`.`].filter(Boolean).join(' '),
  security: ['signed'],
  responses: { ...route.responses, ...SIGNED, ...(route.body ? WITH_BODY : {}) },
});

/** What every signed call with a body can answer besides (decision 0473). */
const WITH_BODY: Record<number, string> = { 413: 'PayloadTooLarge', 415: 'UnsupportedMediaType' };

export const CUSTODY_ROUTES: RouteSpec[] = [
  signed('vaults:write', {
    method: 'post',
    path: '/vaults',
    operationId: 'createVault',
    summary: 'Create a vault (one per end customer)',
    tags: ['vaults'],
    body: { schema: named('VaultCreate', createVaultSchema) },
    responses: {
      201: ok('The vault', 'Vault', vaultResponse),
      400: 'BadRequest',
      409: 'Conflict',
    },
    description: 'An existing externalId gives 409 with the existing id in the message.',
  }),
  signed('vaults:read', {
    method: 'get',
    path: '/vaults',
    operationId: 'listVaults',
    summary: 'List vaults, newest first',
    tags: ['vaults'],
    params: { query: listVaultsSchema },
    responses: { 200: ok('A page of vaults', 'VaultPage', vaultPage), 400: 'BadRequest' },
  }),
  signed('vaults:read', {
    method: 'get',
    path: '/vaults/{vaultId}',
    operationId: 'getVault',
    summary: 'One vault',
    tags: ['vaults'],
    params: { path: vaultId },
    responses: { 200: ok('The vault', 'Vault', vaultResponse), 404: 'NotFound' },
  }),
  signed('wallets:create', {
    method: 'post',
    path: '/vaults/{vaultId}/wallets',
    operationId: 'createWallet',
    summary: 'Create the wallet of one asset in a vault',
    description:
      'Answers the wallet.created payload. A second wallet for the same asset in the vault gives 409. An unknown ' +
      'or disabled asset is 400 on `assetId`; 404 is for the vault of the path.',
    tags: ['wallets'],
    params: { path: vaultId },
    body: { schema: named('WalletCreate', createWalletSchema) },
    responses: {
      201: ok('The wallet', 'Wallet', walletResponse),
      400: 'BadRequest',
      404: 'NotFound',
      409: 'Conflict',
    },
  }),
  signed('wallets:read', {
    method: 'get',
    path: '/vaults/{vaultId}/wallets',
    operationId: 'listVaultWallets',
    summary: "A vault's wallets",
    tags: ['wallets'],
    params: { path: vaultId },
    responses: { 200: ok('The wallets', 'WalletList', walletList), 404: 'NotFound' },
  }),
  signed('wallets:read', {
    method: 'get',
    path: '/wallets/{id}',
    operationId: 'getWallet',
    summary: 'One wallet with its deposit addresses',
    tags: ['wallets'],
    params: { path: id('Wallet id') },
    responses: { 200: ok('The wallet', 'WalletDetail', walletDetailResponse), 404: 'NotFound' },
  }),
  signed('wallets:create', {
    method: 'post',
    path: '/wallets/{id}/addresses',
    operationId: 'addDepositAddress',
    summary: 'Add a deposit address to a wallet',
    description: "400 on `walletId` when the wallet's asset is disabled (for the tenant or globally).",
    tags: ['wallets'],
    params: { path: id('Wallet id') },
    responses: {
      201: ok('The new address', 'DepositAddress', addedAddressResponse),
      400: 'BadRequest',
      404: 'NotFound',
    },
  }),
  signed('wallets:read', {
    method: 'get',
    path: '/wallets/{id}/balance',
    operationId: 'getWalletBalance',
    summary: 'The authoritative balance of a wallet',
    tags: ['wallets'],
    params: { path: id('Wallet id') },
    responses: { 200: ok('The balance', 'Balance', balanceResponse), 404: 'NotFound' },
  }),
  signed('assets:read', {
    method: 'get',
    path: '/assets',
    operationId: 'listAssets',
    summary: "The assets enabled for the caller's tenant",
    tags: ['assets'],
    responses: { 200: ok('The assets', 'AssetList', assetList) },
  }),
  signed('address-book:write', {
    method: 'post',
    path: '/address-book',
    operationId: 'createAddressBookEntry',
    summary: 'Add a withdrawal destination',
    description:
      "The address is validated for the asset's network (checksum included). Emits address-book.changed.",
    tags: ['address-book'],
    body: { schema: named('AddressBookEntryCreate', createAddressBookEntrySchema) },
    responses: {
      201: ok('The entry', 'AddressBookEntry', addressBookEntryResponse),
      400: 'BadRequest',
      404: 'NotFound',
      409: 'Conflict',
    },
  }),
  signed('address-book:read', {
    method: 'get',
    path: '/address-book',
    operationId: 'listAddressBook',
    summary: 'The address book',
    tags: ['address-book'],
    params: { query: listAddressBookSchema },
    responses: { 200: ok('The entries', 'AddressBookList', addressBookList), 400: 'BadRequest' },
  }),
  signed('address-book:read', {
    method: 'get',
    path: '/address-book/{id}',
    operationId: 'getAddressBookEntry',
    summary: 'One address-book entry',
    tags: ['address-book'],
    params: { path: id('Entry id') },
    responses: { 200: ok('The entry', 'AddressBookEntry', addressBookEntryResponse), 404: 'NotFound' },
  }),
  signed('address-book:write', {
    method: 'delete',
    path: '/address-book/{id}',
    operationId: 'deleteAddressBookEntry',
    summary: 'Remove an address-book entry',
    tags: ['address-book'],
    params: { path: id('Entry id') },
    responses: { 204: { description: 'Removed' }, 404: 'NotFound' },
  }),
  signed('transfers:write', {
    method: 'post',
    path: '/transactions/transfer',
    operationId: 'createTransfer',
    summary: 'Internal transfer between two wallets of the tenant',
    description:
      'Insufficient available balance, too many decimals, a non-positive amount, or a mismatch in asset or tenant gives 400 with `errors`; nothing is created then.',
    tags: ['transactions'],
    params: { header: idempotencyHeaders },
    body: { schema: named('TransferCreate', transferSchema) },
    responses: {
      201: ok(
        'The transaction (or the original answer of a repeated Idempotency-Key)',
        'Transaction',
        transactionResponse,
      ),
      400: 'BadRequest',
      404: 'NotFound',
    },
  }),
  signed('withdrawals:write', {
    method: 'post',
    path: '/transactions/withdraw',
    operationId: 'createWithdrawal',
    summary: 'Withdrawal to an address already in the address book',
    description:
      'Insufficient available balance, too many decimals, a non-positive amount, a destination not in the address book, or a mismatch in asset or tenant gives 400 with `errors`; nothing is created then.',
    tags: ['transactions'],
    params: { header: idempotencyHeaders },
    body: { schema: named('WithdrawalCreate', withdrawSchema) },
    responses: {
      201: ok(
        'The transaction (or the original answer of a repeated Idempotency-Key)',
        'Transaction',
        transactionResponse,
      ),
      400: 'BadRequest',
      404: 'NotFound',
    },
  }),
  signed('transactions:read', {
    method: 'get',
    path: '/transactions',
    operationId: 'listTransactions',
    summary: 'List transactions, newest first (createdAt descending)',
    tags: ['transactions'],
    params: { query: listTransactionsSchema },
    responses: { 200: ok('A page of transactions', 'TransactionPage', transactionPage), 400: 'BadRequest' },
  }),
  signed('transactions:read', {
    method: 'get',
    path: '/transactions/{id}',
    operationId: 'getTransaction',
    summary: 'One transaction (the authoritative state)',
    tags: ['transactions'],
    params: { path: id('Transaction id') },
    responses: { 200: ok('The transaction', 'Transaction', transactionResponse), 404: 'NotFound' },
  }),
  signed('withdrawals:write or transfers:write, by the type', {
    method: 'post',
    path: '/transactions/{id}/cancel',
    operationId: 'cancelTransaction',
    summary: 'Cancel a withdrawal or transfer not yet broadcast',
    description: 'Allowed from Submitted and PendingSignature; 409 once the state no longer allows it.',
    tags: ['transactions'],
    params: { path: id('Transaction id') },
    responses: {
      200: ok('The transaction, Cancelled', 'Transaction', transactionResponse),
      404: 'NotFound',
      409: 'Conflict',
    },
  }),
  signed('withdrawals:approve', {
    method: 'post',
    path: '/transactions/{id}/approve',
    operationId: 'approveWithdrawal',
    summary: 'Approve a withdrawal waiting for its approval quorum',
    description:
      'By a key the policy names as an approver, never the requesting key (403). Once the quorum is reached the withdrawal proceeds; 409 once it is decided.',
    tags: ['policies'],
    params: { path: id('Transaction id') },
    body: { schema: named('WithdrawalApprove', approveWithdrawalInput) },
    responses: {
      200: ok('The withdrawal with its pendingApprovals', 'Transaction', transactionResponse),
      404: 'NotFound',
      409: 'Conflict',
    },
  }),
  signed('withdrawals:approve', {
    method: 'post',
    path: '/transactions/{id}/reject',
    operationId: 'rejectWithdrawal',
    summary: 'Reject a withdrawal waiting for its approval quorum',
    description: 'It ends Cancelled with the reason, and its hold is released. 403 and 409 as for approve.',
    tags: ['policies'],
    params: { path: id('Transaction id') },
    body: { schema: named('WithdrawalReject', rejectWithdrawalInput) },
    responses: {
      200: ok('The withdrawal, Cancelled', 'Transaction', transactionResponse),
      404: 'NotFound',
      409: 'Conflict',
    },
  }),
  signed('policies:read', {
    method: 'get',
    path: '/policies',
    operationId: 'getWithdrawalPolicy',
    summary: "The withdrawal policy of the key's environment",
    description: 'Version 0 with no rules when none is set (docs/custody-api.md, "Withdrawal policies").',
    tags: ['policies'],
    responses: { 200: ok('The policy', 'WithdrawalPolicy', withdrawalPolicyView) },
  }),
  signed('sandbox:write', {
    method: 'post',
    path: '/sandbox/deposits',
    operationId: 'createSandboxDeposit',
    summary: 'Sandbox keys only: inject an on-chain deposit into the simulator',
    description: 'The deposit then moves through the statuses like a real one. A live key gets 403.',
    tags: ['sandbox'],
    body: { schema: named('SandboxDepositCreate', sandboxDepositSchema) },
    responses: {
      201: ok('The deposit transaction', 'Transaction', transactionResponse),
      400: 'BadRequest',
      404: 'NotFound',
    },
  }),
];

const health = z.object({
  status: z.enum(['ok', 'error']),
  service: z.string(),
  checks: z.record(z.string(), z.object({ status: z.enum(['up', 'down']) }).loose()),
});

/** Builds the document; `extraRoutes` lets another module register its own routes with one line each. */
export function buildCustodyApiDocument(extraRoutes: RouteSpec[] = []): Record<string, unknown> {
  const builder = new OpenApiBuilder({
    title: 'Tessera custody API',
    version: '1.0.0',
    description: [
      'Vaults, wallets, transactions, the address book and outbound webhooks.',
      '',
      'Every partner call is signed: `X-API-Key` (`ck_live_…` or `ck_test_…`), `X-Timestamp` (Unix seconds, or 13-digit milliseconds, within 30 s of server time) and `X-Signature` = lowercase hex HMAC-SHA256(secret, timestamp + METHOD + pathWithQuery + rawBody). The three headers go together; a (key, timestamp, signature) tuple is single-use for 60 s, so a retry is re-signed.',
      '',
      'Errors are `{message, errors?}` (`errors` only for field problems); a 429 has an empty body and an integer `Retry-After`. A 503 means a dependency (Postgres, Redis) is away: it carries `Retry-After: 1`, the first step; retry with back-off and the same `Idempotency-Key`.',
      '',
      'The operator API (`/admin`, tag `operator`) takes `Authorization: Bearer $ADMIN_TOKEN` and is off (404) when ADMIN_TOKEN is unset.',
    ].join('\n'),
    servers: [{ url: 'http://localhost:3002', description: 'pnpm start (host mode)' }],
    tags: [
      { name: 'vaults', description: 'One vault per end customer' },
      {
        name: 'wallets',
        description: 'One wallet per asset in a vault, with deposit addresses and a balance',
      },
      { name: 'assets', description: "The tenant's enabled assets" },
      { name: 'address-book', description: 'Withdrawal destinations' },
      { name: 'transactions', description: 'Deposits, internal transfers and withdrawals' },
      { name: 'sandbox', description: 'Test keys only' },
      { name: 'webhooks', description: 'The outbound webhook endpoint and its deliveries' },
      { name: 'webhook-events', description: 'What Tessera POSTs to the configured endpoint' },
      { name: 'health', description: 'Anonymous checks' },
      { name: 'operator', description: 'The operator API (bearer ADMIN_TOKEN)' },
    ],
    securitySchemes: {
      apiKey: {
        type: 'apiKey',
        in: 'header',
        name: 'X-API-Key',
        description: 'The key id, ck_live_… or ck_test_…',
      },
      timestamp: {
        type: 'apiKey',
        in: 'header',
        name: 'X-Timestamp',
        description: 'Unix seconds (or 13-digit milliseconds), within 30 s of server time',
      },
      signature: {
        type: 'apiKey',
        in: 'header',
        name: 'X-Signature',
        description: 'Lowercase hex HMAC-SHA256(secret, timestamp + METHOD + pathWithQuery + rawBody)',
      },
      operatorToken: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN' },
    },
    security: { signed: ['apiKey', 'timestamp', 'signature'], operator: ['operatorToken'] },
    responses: RESPONSES,
  });
  for (const route of [...CUSTODY_ROUTES, ...CUSTODY_OPERATOR_ROUTES, ...extraRoutes]) builder.route(route);
  builder.route({
    method: 'get',
    path: '/health',
    operationId: 'health',
    summary: 'Anonymous health check',
    tags: ['health'],
    security: [],
    responses: {
      200: ok('Postgres and Redis answer', 'Health', health),
      503: ok('Postgres or Redis does not answer', 'Health', health),
      429: 'TooManyRequests',
    },
  });
  registerWebhookRoutes(builder, {
    base: '/webhooks',
    config: '/webhooks/outbound',
    tag: 'webhooks',
    security: ['signed'],
    operationPrefix: 'custody',
    errors: SIGNED,
    notFound: 'NotFound',
    badRequest: 'BadRequest',
    badGateway: 'BadGateway',
    scopes: { read: 'webhooks:read', write: 'webhooks:write' },
  });
  registerWebhookEvents(builder, 'custody', 'webhook-events');
  return builder.build();
}
