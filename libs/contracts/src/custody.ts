import { z } from 'zod';

/** Transaction statuses of the custody contract ("States and transitions"). */
export const CUSTODY_TRANSACTION_STATUSES = [
  'Submitted',
  'PendingSignature',
  'Broadcasting',
  'Confirming',
  'Completed',
  'Failed',
  'Cancelled',
] as const;
export type CustodyTransactionStatus = (typeof CUSTODY_TRANSACTION_STATUSES)[number];

/** Payload of custody.transaction.advance.v1: move one transaction one step from `expectedStatus`. */
export const custodyTransactionAdvancePayload = z.object({
  transactionId: z.string().uuid(),
  expectedStatus: z.enum(CUSTODY_TRANSACTION_STATUSES),
});
export type CustodyTransactionAdvancePayload = z.infer<typeof custodyTransactionAdvancePayload>;

/** Operator API: `POST /admin/reconciliations` body (decision 0226). Empty: every tenant. */
export const reconciliationRequest = z.object({ tenantId: z.string().uuid().optional() }).strict();
export type ReconciliationRequest = z.infer<typeof reconciliationRequest>;

export const reconciliationListQuery = z.object({
  take: z.coerce.number().int().min(1).max(200).default(20),
  /** `nextCursor` of the previous page. */
  cursor: z.string().optional(),
});

/**
 * Why a wallet's numbers disagree. `unconfirmed_deposit` and `in_flight_withdrawal` are explained by
 * transactions still moving (not an alert); the others are differences to investigate.
 */
export const RECONCILIATION_CAUSES = [
  'ledger_balance_mismatch',
  'unconfirmed_deposit',
  'in_flight_withdrawal',
  'missing_credit',
  'fee_drift',
  'unexplained_shortfall',
] as const;
export type ReconciliationCause = (typeof RECONCILIATION_CAUSES)[number];

export const reconciliationFinding = z.object({
  id: z.string().uuid(),
  walletId: z.string().uuid(),
  tenantId: z.string().uuid(),
  assetSymbol: z.string(),
  /** `ledger`: balance row vs sum of ledger entries; `chain`: on-chain balance vs the ledger. */
  check: z.enum(['ledger', 'chain']),
  cause: z.enum(RECONCILIATION_CAUSES),
  /** True when transactions still in flight account for the whole difference. */
  explained: z.boolean(),
  /** Asset units (decimal strings): what the reference says, what was found, found − expected. */
  expected: z.string(),
  actual: z.string(),
  difference: z.string(),
  details: z.record(z.string(), z.unknown()),
});
export type ReconciliationFinding = z.infer<typeof reconciliationFinding>;

export const reconciliationRunSummary = z.object({
  id: z.string().uuid(),
  trigger: z.enum(['scheduled', 'operator', 'cli']),
  tenantId: z.string().uuid().nullable(),
  /** `partial`: the chain could not be read; the ledger checks ran. */
  status: z.enum(['completed', 'partial']),
  walletsChecked: z.number().int(),
  chainWalletsChecked: z.number().int(),
  /** Unexplained findings (each raised an alert). */
  differences: z.number().int(),
  explained: z.number().int(),
  error: z.string().nullable(),
  startedAt: z.string(),
  finishedAt: z.string(),
});
export const reconciliationRun = reconciliationRunSummary.extend({
  findings: z.array(reconciliationFinding),
});
export type ReconciliationRunSummary = z.infer<typeof reconciliationRunSummary>;

/** `GET /admin/reconciliations`: runs newest first; `nextCursor` is null on the last page. */
export const reconciliationRunPage = z.object({
  items: z.array(reconciliationRunSummary),
  nextCursor: z.string().nullable(),
});
export type ReconciliationRunPage = z.infer<typeof reconciliationRunPage>;
export type ReconciliationRun = z.infer<typeof reconciliationRun>;
