import { z } from 'zod';
import { CUSTODY_TRANSACTION_STATUSES } from './custody';
import { pendingApprovalsView, policyDecisionView } from './custody-policies';
import { optionalOrNull } from './optional-fields';
import { transactionCreatedData, walletCreatedData } from './webhooks-catalog';

/**
 * Request and response bodies of the custody partner API: the schemas the services parse with, and the ones
 * the OpenAPI document (custody-api.openapi.ts) and the typed client are made from.
 */

const ts = z.string().datetime({ offset: true });
const uuid = z.string().uuid();
const decimal = z
  .string()
  .regex(/^\d+(\.\d+)?$/)
  .describe('A decimal string in asset units, never a float');

// Not trimmed: parseAmount refuses surrounding whitespace rather than reading past it (issue 15).
const amountField = z
  .string()
  .min(1)
  .max(100)
  .describe(
    'Positive decimal string in asset units with at most the asset decimals and 30 digits before the point, e.g. "0.015"; no exponent, no whitespace',
  );
const noteField = optionalOrNull(z.string().max(1000));

/** The `{message, errors?}` body of every custody error except 429. */
export const custodyError = z.object({
  message: z.string(),
  errors: z
    .record(z.string(), z.array(z.string()))
    .optional()
    .describe('Field problems: field name to messages; present only for field problems'),
});

/** POST /vaults. */
export const createVaultSchema = z.object({
  externalId: z.string().trim().min(1).max(200),
  name: z.string().trim().min(1).max(200),
});

/** POST /vaults/{vaultId}/wallets. */
export const createWalletSchema = z.object({
  assetId: z.string().trim().min(1).max(64).describe("The asset's id, or its symbol (`ETH`)"),
  label: optionalOrNull(z.string().max(200)),
});

/** GET /vaults query. */
export const listVaultsSchema = z.object({
  take: z.coerce.number().int().min(1).max(200).default(20),
  cursor: z.string().optional(),
});

/** POST /address-book. */
export const createAddressBookEntrySchema = z.object({
  assetId: z.string().trim().min(1).max(64).describe("The asset's id, or its symbol (`ETH`), as for wallets"),
  address: z.string().trim().min(1).max(200).describe("Validated for the asset's network, checksum included"),
  tag: optionalOrNull(z.string().trim().min(1).max(20)),
  label: z.string().trim().min(1).max(200),
});

/** GET /address-book query. */
export const listAddressBookSchema = z.object({
  assetId: z
    .string()
    .trim()
    .min(1)
    .max(64)
    .optional()
    .describe("The asset's id, or its symbol (`XRP`), as for POST /address-book"),
});

/** POST /transactions/transfer. */
export const transferSchema = z.object({
  sourceWalletId: uuid,
  destinationWalletId: uuid,
  amount: amountField,
  note: noteField,
});

/** POST /transactions/withdraw. */
export const withdrawSchema = z.object({
  sourceWalletId: uuid,
  destinationAddress: z.string().trim().min(1).max(200),
  destinationTag: optionalOrNull(z.string().trim().min(1).max(20)),
  amount: amountField,
  note: noteField,
});

/** POST /sandbox/deposits (sandbox keys only). */
export const sandboxDepositSchema = z.object({
  walletId: uuid,
  amount: amountField,
  sourceAddress: optionalOrNull(z.string().trim().min(1).max(200)),
});

/** GET /transactions query. */
export const listTransactionsSchema = z.object({
  take: z.coerce
    .number()
    .int()
    .min(1, 'take must be at least 1')
    .max(200, 'take must be at most 200')
    .default(20),
  cursor: z.string().optional(),
  type: z.enum(['Deposit', 'Withdrawal', 'InternalTransfer']).optional(),
  status: z.enum(CUSTODY_TRANSACTION_STATUSES).optional(),
  vaultId: uuid
    .optional()
    .describe(
      "Transactions that move this vault's balances: its own, and internal transfers into it (whose vaultId is the source's).",
    ),
  walletId: uuid
    .optional()
    .describe(
      "Transactions that move this wallet's balance: as its wallet, as a transfer's source or destination.",
    ),
  since: z.string().datetime({ offset: true }).optional(),
});

/** The `Idempotency-Key` header of transfer and withdraw. */
export const IDEMPOTENCY_KEY_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
export const idempotencyHeaders = z.object({
  'Idempotency-Key': z
    .string()
    .regex(IDEMPOTENCY_KEY_PATTERN)
    .describe(
      'Up to 64 characters of A-Za-z0-9_-. For 24 hours the same key and body answer the original response; the same key with another body is a 400. The body is compared as sent, in canonical JSON (RFC 8785): member order and whitespace between tokens do not count, every member does, fields the endpoint ignores included.',
    ),
});

// ---- responses ----

export const vaultResponse = z.object({
  id: uuid,
  externalId: z.string(),
  name: z.string(),
  status: z.string().describe('`Active` on creation'),
  createdAt: ts,
});
export const vaultPage = z.object({ items: z.array(vaultResponse), nextCursor: z.string().nullable() });

/** The wallet.created payload. */
export const walletResponse = walletCreatedData;
export const walletList = z.object({ items: z.array(walletResponse) });

export const depositAddressResponse = z.object({
  address: z.string(),
  tag: z.string().nullable(),
  createdAt: ts,
});
export const walletDetailResponse = walletCreatedData.extend({ addresses: z.array(depositAddressResponse) });
export const addedAddressResponse = depositAddressResponse.extend({ walletId: uuid });

export const balanceResponse = z.object({
  walletId: uuid,
  assetId: uuid,
  assetSymbol: z.string(),
  total: decimal,
  available: decimal,
  pending: decimal,
  locked: decimal,
  updatedAt: ts,
});

export const assetResponse = z.object({
  id: uuid,
  symbol: z.string(),
  network: z.string(),
  decimals: z.number().int(),
  type: z.enum(['native', 'token']),
  contractAddress: z.string().optional(),
  requiresTag: z.boolean(),
  confirmations: z.number().int(),
});
export const assetList = z.object({ items: z.array(assetResponse) });

export const addressBookEntryResponse = z.object({
  id: uuid,
  assetId: uuid,
  address: z.string(),
  tag: z.string().nullable(),
  label: z.string(),
  createdAt: ts,
});
export const addressBookList = z.object({ items: z.array(addressBookEntryResponse) });

/** A transaction as the API answers it: the transaction.created fields plus the machine's own. */
export const transactionResponse = transactionCreatedData.extend({
  failureReason: z.string().nullable(),
  completedAt: ts.nullable(),
  updatedAt: ts,
  confirmations: z.number().int().nullable().describe('On the EVM chain: confirmations counted so far'),
  blockNumber: z.string().nullable(),
  blockHash: z.string().nullable(),
  pendingApprovals: pendingApprovalsView
    .nullable()
    .optional()
    .describe('Withdrawals only: the approval quorum the withdrawal policy asked for, null when none'),
  policyDecisions: z
    .array(policyDecisionView)
    .optional()
    .describe(
      'Withdrawals only: every policy decision (evaluation, approvals, rejection, expiry), oldest first',
    ),
});
export const transactionPage = z.object({
  items: z.array(transactionResponse),
  nextCursor: z.string().nullable(),
});
