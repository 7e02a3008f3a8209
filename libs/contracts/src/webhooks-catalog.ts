import { z } from 'zod';

/** Where a partner event comes from; each source has its own endpoint configuration per tenant. */
export const webhookSource = z.enum(['custody', 'verification']);
export type WebhookSource = z.infer<typeof webhookSource>;

const ts = z.string().datetime({ offset: true });
const decimal = z.string().regex(/^-?\d+(\.\d+)?$/);
const nullableDecimal = decimal.nullable();
const transactionType = z.enum(['Deposit', 'Withdrawal', 'InternalTransfer']);
const transactionStatus = z.enum([
  'Submitted',
  'PendingSignature',
  'Broadcasting',
  'Confirming',
  'Completed',
  'Failed',
  'Cancelled',
]);

/** transaction.created: every Transaction field of the contract. */
export const transactionCreatedData = z.object({
  transactionId: z.string().uuid(),
  type: transactionType,
  status: transactionStatus,
  vaultId: z.string().uuid(),
  vaultExternalId: z.string(),
  vaultName: z.string(),
  assetId: z.string().uuid(),
  assetSymbol: z.string(),
  assetNetwork: z.string(),
  sourceWalletId: z.string().uuid().nullable(),
  destinationWalletId: z.string().uuid().nullable(),
  amount: decimal,
  sourceAddress: z.string(),
  destinationAddress: z.string(),
  destinationTag: z.string().nullable(),
  txHash: z.string().nullable(),
  networkFee: nullableDecimal.optional(),
  feeCurrency: z.string().nullable().optional(),
  amountUSD: nullableDecimal,
  feeUSD: nullableDecimal,
  note: z.string().nullable(),
  createdAt: ts,
});

/** transaction.status.updated: the catalog's listed fields. */
export const transactionStatusUpdatedData = z.object({
  transactionId: z.string().uuid(),
  type: transactionType,
  status: transactionStatus,
  previousStatus: transactionStatus,
  vaultId: z.string().uuid(),
  vaultExternalId: z.string(),
  vaultName: z.string(),
  assetId: z.string().uuid(),
  assetSymbol: z.string(),
  assetNetwork: z.string(),
  sourceWalletId: z.string().uuid().nullable(),
  amount: decimal,
  sourceAddress: z.string(),
  destinationAddress: z.string(),
  txHash: z.string().nullable(),
  networkFee: nullableDecimal.optional(),
  feeCurrency: z.string().nullable().optional(),
  amountUSD: nullableDecimal,
  feeUSD: nullableDecimal,
  failureReason: z.string().nullable(),
  completedAt: ts.nullable(),
});

export const walletCreatedData = z.object({
  walletId: z.string().uuid(),
  vaultId: z.string().uuid(),
  assetId: z.string().uuid(),
  label: z.string(),
  depositAddress: z.string(),
  depositTag: z.string().nullable(),
  status: z.string(),
  createdAt: ts,
});

/** balance.updated: a cache-invalidation signal; entityId is `<vaultAccountId>:<assetId>`. */
export const balanceUpdatedData = z
  .object({ vaultAccountId: z.string().uuid(), assetId: z.string().uuid() })
  .strict();

export const webhookTestData = z.object({ message: z.string(), sentAt: ts });

const applicantRef = z.object({
  applicantId: z.string(),
  externalUserId: z.string(),
  levelName: z.string().nullable().optional(),
  sandbox: z.boolean().optional(),
  createdAtUtc: ts.optional(),
  /** Operator actions (reset, deactivate, activate): the applicant's status after it, and the reason given. */
  status: z.string().optional(),
  reason: z.string().nullable().optional(),
});

export const applicantReviewedData = z.object({
  applicantId: z.string(),
  externalUserId: z.string(),
  levelName: z.string().nullable(),
  reviewStatus: z.string(),
  reviewResult: z.object({
    reviewAnswer: z.enum(['GREEN', 'RED']),
    reviewRejectType: z.string().nullable().optional(),
    rejectLabels: z.array(z.string()),
    moderationComment: z.string().nullable().optional(),
  }),
  steps: z.array(z.record(z.string(), z.unknown())),
  sandbox: z.boolean(),
  createdAtUtc: ts,
});

/**
 * The body of every delivery. The contract's five fields, plus `sequence` (decision 0225): an integer that
 * increases by exactly 1 per (tenant, entityType, entityId), assigned when the event is committed, and the
 * same on every retry and manual re-queue of the event.
 */
export const webhookEnvelope = z.object({
  eventType: z.string().describe('Dotted event name.'),
  entityType: z.string().describe('transaction, wallet, balance, applicant or webhook.'),
  entityId: z.string().describe('Stable entity id; for balance it is <vaultAccountId>:<assetId>.'),
  timestamp: ts.describe('Emission time, UTC ISO 8601.'),
  data: z.record(z.string(), z.unknown()).describe('Event-specific payload (dataSchema).'),
  sequence: z
    .number()
    .int()
    .min(1)
    .describe(
      'Position of this event among all the events of the same (entityType, entityId) of your tenant, of every type: 1, 2, 3, … without gaps, in commit order. Apply events of one entity in sequence order. An endpoint subscribed to every type (the default) gets every number, so a gap means an event is still on its way (hold later ones, or re-read the entity); an endpoint subscribed to some types only never gets the numbers of the others, so it applies an event whose sequence is above the last one applied and waits for no gap. The same on every retry and re-queue.',
    ),
});
export type WebhookEnvelope = z.infer<typeof webhookEnvelope>;

export interface CatalogEntry {
  eventType: string;
  entityType: string;
  source: WebhookSource;
  description: string;
  schema: z.ZodType;
}

const custody: CatalogEntry[] = [
  {
    eventType: 'transaction.created',
    entityType: 'transaction',
    source: 'custody',
    description: 'Any new transaction (deposit detected, transfer submitted, withdrawal submitted).',
    schema: transactionCreatedData,
  },
  {
    eventType: 'transaction.status.updated',
    entityType: 'transaction',
    source: 'custody',
    description: 'Every status change of a transaction.',
    schema: transactionStatusUpdatedData,
  },
  {
    eventType: 'wallet.created',
    entityType: 'wallet',
    source: 'custody',
    description: 'A wallet is provisioned.',
    schema: walletCreatedData,
  },
  {
    eventType: 'balance.updated',
    entityType: 'balance',
    source: 'custody',
    description:
      'A wallet balance changes for any reason (confirmed deposit or withdrawal, internal transfer in or out, on-chain rebase). Cache-invalidation signal: re-read the balance.',
    schema: balanceUpdatedData,
  },
];

const verificationTypes: [string, string, z.ZodType][] = [
  ['applicantCreated', 'An applicant was created.', applicantRef],
  ['applicantPending', 'An applicant submitted everything and checks are running.', applicantRef],
  ['applicantReviewed', 'A review was completed (GREEN or RED).', applicantReviewedData],
  ['applicantOnHold', 'A review needs an operator decision.', applicantRef],
  ['applicantReset', 'An applicant was reset by an operator.', applicantRef],
  ['applicantDeactivated', 'An applicant was deactivated.', applicantRef],
  ['applicantActivated', 'An applicant was activated again.', applicantRef],
  ['applicantPersonalInfoChanged', "An applicant's personal information changed.", applicantRef],
  ['companyChildrenCompleted', 'Every UBO child of a company applicant is closed.', applicantRef],
];

const verification: CatalogEntry[] = verificationTypes.map(([eventType, description, schema]) => ({
  eventType,
  entityType: 'applicant',
  source: 'verification',
  description,
  schema,
}));

export const WEBHOOK_TEST_EVENT = 'webhook.test';

const testEvent = (source: WebhookSource): CatalogEntry => ({
  eventType: WEBHOOK_TEST_EVENT,
  entityType: 'webhook',
  source,
  description: 'Synthetic event sent by the test delivery, signed like real ones.',
  schema: webhookTestData,
});

/** The live event catalog of each source, webhook.test included. */
export const WEBHOOK_CATALOG: Record<WebhookSource, CatalogEntry[]> = {
  custody: [...custody, testEvent('custody')],
  verification: [...verification, testEvent('verification')],
};

export function catalogEntry(source: WebhookSource, eventType: string): CatalogEntry | undefined {
  return WEBHOOK_CATALOG[source].find((e) => e.eventType === eventType);
}

/**
 * Notifications a source emits that are not in its catalog (the custody contract names address-book changes
 * but gives them no catalog entry, and its envelope's entityType is transaction, wallet or balance). An
 * endpoint gets one only when it lists it in `subscribedEventTypes`; "every type" means the catalog's.
 */
export const WEBHOOK_NOTIFICATIONS: Record<WebhookSource, readonly string[]> = {
  custody: ['address-book.changed'],
  verification: [],
};

const catalogTypes: Record<WebhookSource, ReadonlySet<string>> = {
  custody: new Set(WEBHOOK_CATALOG.custody.map((e) => e.eventType)),
  verification: new Set(WEBHOOK_CATALOG.verification.map((e) => e.eventType)),
};

/** Whether an endpoint subscribed to `subscribed` (null: every catalog type) gets events of `eventType`. */
export function subscribesTo(
  source: WebhookSource,
  subscribed: readonly string[] | null,
  eventType: string,
): boolean {
  return subscribed ? subscribed.includes(eventType) : catalogTypes[source].has(eventType);
}

/** Whether `subscribedEventTypes` may name `eventType`: a catalog type or a notification of the source. */
export function isSubscribable(source: WebhookSource, eventType: string): boolean {
  return catalogTypes[source].has(eventType) || WEBHOOK_NOTIFICATIONS[source].includes(eventType);
}

const ENVELOPE_JSON_SCHEMA = z.toJSONSchema(webhookEnvelope, { io: 'input', unrepresentable: 'any' });

/** The catalog as served to partners: JSON Schema for each payload. */
export function publicCatalog(source: WebhookSource) {
  return WEBHOOK_CATALOG[source].map((e) => ({
    eventType: e.eventType,
    entityType: e.entityType,
    description: e.description,
    dataSchema: z.toJSONSchema(e.schema, { io: 'input', unrepresentable: 'any' }),
    envelopeSchema: ENVELOPE_JSON_SCHEMA,
  }));
}
