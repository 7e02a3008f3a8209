/**
 * Handwritten custody shapes from the contract and DECISIONS.md. They are the fallback when the OpenAPI
 * document does not describe a body (see openapi-types.ts). Amounts are decimal strings, never numbers.
 */
export type TransactionStatus =
  'Submitted' | 'PendingSignature' | 'Broadcasting' | 'Confirming' | 'Completed' | 'Failed' | 'Cancelled';
export type TransactionType = 'Deposit' | 'Withdrawal' | 'InternalTransfer';

export interface Transaction {
  transactionId: string;
  type: TransactionType;
  status: TransactionStatus;
  previousStatus?: TransactionStatus | null;
  vaultId: string;
  vaultExternalId: string;
  vaultName: string;
  assetId: string;
  assetSymbol: string;
  assetNetwork: string;
  sourceWalletId: string | null;
  destinationWalletId: string | null;
  amount: string;
  sourceAddress: string | null;
  destinationAddress: string | null;
  destinationTag: string | null;
  txHash: string | null;
  networkFee?: string | null;
  feeCurrency?: string | null;
  amountUSD: string | null;
  feeUSD: string | null;
  note: string | null;
  failureReason?: string | null;
  createdAt: string;
  completedAt?: string | null;
}

export interface Vault {
  id: string;
  externalId: string;
  name: string;
  status: string;
  createdAt: string;
}

export interface Wallet {
  walletId: string;
  vaultId: string;
  assetId: string;
  label: string;
  depositAddress: string;
  depositTag: string | null;
  status: string;
  createdAt: string;
}

export interface Balance {
  walletId: string;
  assetId: string;
  assetSymbol: string;
  total: string;
  available: string;
  pending: string;
  locked: string;
  updatedAt: string;
}

export interface Asset {
  id: string;
  symbol: string;
  network: string;
  decimals: number;
  type: 'native' | 'token';
  contractAddress?: string | null;
  requiresTag: boolean;
  confirmations: number;
}

export interface AddressBookEntry {
  id: string;
  assetId: string;
  address: string;
  tag: string | null;
  label: string;
  createdAt: string;
}

export interface WebhookConfiguration {
  url: string | null;
  signingSecret: string | null;
  subscribedEventTypes: string[] | null;
  isConfigured: boolean;
}

export interface DeliverySummary {
  id: string;
  eventId: string;
  eventType: string;
  entityType: string;
  entityId: string;
  status: 'pending' | 'delivered' | 'failed' | 'dead';
  attemptCount: number;
  lastAttemptAt: string | null;
  createdAt: string;
  deliveredAt: string | null;
  lastError: string | null;
}

export interface DeliveryAttempt {
  id: string;
  attemptNumber: number;
  requestUrl: string;
  httpStatusCode: number | null;
  responseBody: string | null;
  errorMessage: string | null;
  durationMs: number;
  attemptedAt: string;
  success: boolean;
}

export interface DeliveryDetail extends DeliverySummary {
  payload: string;
  attempts: DeliveryAttempt[];
}

export interface CatalogEntry {
  eventType: string;
  description: string;
  [key: string]: unknown;
}

export interface TransferRequest {
  sourceWalletId: string;
  destinationWalletId: string;
  amount: string;
  note?: string;
}

export interface WithdrawRequest {
  sourceWalletId: string;
  destinationAddress: string;
  destinationTag?: string;
  amount: string;
  note?: string;
}

export interface TransactionListQuery {
  /** Page size (default 20, max 200). */
  take?: number;
  type?: TransactionType;
  status?: TransactionStatus;
  vaultId?: string;
  walletId?: string;
  /** ISO 8601; only transactions created at or after it. */
  since?: string;
}
