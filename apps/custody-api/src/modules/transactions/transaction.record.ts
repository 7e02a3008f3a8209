import type { CustodyTransactionStatus } from '@tessera/contracts';
import { formatAmount } from '../../common/amounts';

export type TransactionType = 'Deposit' | 'Withdrawal' | 'InternalTransfer';

export const TERMINAL_STATUSES: CustodyTransactionStatus[] = ['Completed', 'Failed', 'Cancelled'];

/** The chain order of the machine; terminal states have no next step. */
export const NEXT_STATUS: Partial<Record<CustodyTransactionStatus, CustodyTransactionStatus>> = {
  Submitted: 'PendingSignature',
  PendingSignature: 'Broadcasting',
  Broadcasting: 'Confirming',
  Confirming: 'Completed',
};

/** A transaction row with its vault and asset context (amounts in base units). */
export interface TransactionRecord {
  id: string;
  tenantId: string;
  environment: string;
  type: TransactionType;
  status: CustodyTransactionStatus;
  vaultId: string;
  vaultExternalId: string;
  vaultName: string;
  assetId: string;
  assetSymbol: string;
  assetNetwork: string;
  assetDecimals: number;
  assetConfirmations: number;
  walletId: string;
  sourceWalletId: string | null;
  destinationWalletId: string | null;
  amount: string;
  sourceAddress: string;
  destinationAddress: string;
  destinationTag: string | null;
  txHash: string | null;
  networkFee: string | null;
  feeCurrency: string | null;
  note: string | null;
  failureReason: string | null;
  createdAt: Date;
  updatedAt: Date;
  completedAt: Date | null;
  /** The sequence of the transaction's latest event: 1 at creation, +1 with every move (decision 0425). */
  eventSequence: number;
  /** On the EVM chain: confirmations counted so far and the block holding the transfer (null elsewhere). */
  confirmations?: number | null;
  blockNumber?: string | null;
  blockHash?: string | null;
}

/** Decimals of a fee currency that differs from the asset (an ERC-20's fee is paid in ETH). */
const FEE_CURRENCY_DECIMALS: Record<string, number> = { ETH: 18, BTC: 8, XRP: 6 };

const feeDecimals = (r: TransactionRecord) =>
  r.feeCurrency && r.feeCurrency !== r.assetSymbol
    ? (FEE_CURRENCY_DECIMALS[r.feeCurrency] ?? r.assetDecimals)
    : r.assetDecimals;

const iso = (d: Date | string | null) =>
  d === null ? null : d instanceof Date ? d.toISOString() : new Date(d).toISOString();

/** The contract's Transaction fields: the payload of transaction.created. */
export function transactionFields(r: TransactionRecord) {
  return {
    transactionId: r.id,
    type: r.type,
    status: r.status,
    vaultId: r.vaultId,
    vaultExternalId: r.vaultExternalId,
    vaultName: r.vaultName,
    assetId: r.assetId,
    assetSymbol: r.assetSymbol,
    assetNetwork: r.assetNetwork,
    sourceWalletId: r.sourceWalletId,
    destinationWalletId: r.destinationWalletId,
    amount: formatAmount(r.amount, r.assetDecimals),
    sourceAddress: r.sourceAddress,
    destinationAddress: r.destinationAddress,
    destinationTag: r.destinationTag,
    txHash: r.txHash,
    networkFee: r.networkFee === null ? null : formatAmount(r.networkFee, feeDecimals(r)),
    feeCurrency: r.feeCurrency,
    amountUSD: null as string | null,
    feeUSD: null as string | null,
    note: r.note,
    createdAt: iso(r.createdAt),
  };
}

/**
 * The API representation: the contract fields plus the machine's own. `fields` when the caller has them
 * already (a create builds them once for its answer and its transaction.created event).
 */
export function transactionDto(r: TransactionRecord, f = transactionFields(r)) {
  // Every field named, not `{ ...f, failureReason, … }`: on Node 20 each property added after a spread
  // costs about a microsecond, and this answer took 17 µs that way (decision 0422).
  return {
    transactionId: f.transactionId,
    type: f.type,
    status: f.status,
    vaultId: f.vaultId,
    vaultExternalId: f.vaultExternalId,
    vaultName: f.vaultName,
    assetId: f.assetId,
    assetSymbol: f.assetSymbol,
    assetNetwork: f.assetNetwork,
    sourceWalletId: f.sourceWalletId,
    destinationWalletId: f.destinationWalletId,
    amount: f.amount,
    sourceAddress: f.sourceAddress,
    destinationAddress: f.destinationAddress,
    destinationTag: f.destinationTag,
    txHash: f.txHash,
    networkFee: f.networkFee,
    feeCurrency: f.feeCurrency,
    amountUSD: f.amountUSD,
    feeUSD: f.feeUSD,
    note: f.note,
    createdAt: f.createdAt,
    failureReason: r.failureReason,
    completedAt: iso(r.completedAt),
    updatedAt: iso(r.updatedAt),
    confirmations: r.confirmations ?? null,
    blockNumber: r.blockNumber ?? null,
    blockHash: r.blockHash ?? null,
  };
}

/** The payload of transaction.status.updated (catalog field list). */
export function statusUpdatedFields(r: TransactionRecord, previousStatus: CustodyTransactionStatus) {
  const f = transactionFields(r);
  return {
    transactionId: f.transactionId,
    type: f.type,
    status: f.status,
    previousStatus,
    vaultId: f.vaultId,
    vaultExternalId: f.vaultExternalId,
    vaultName: f.vaultName,
    assetId: f.assetId,
    assetSymbol: f.assetSymbol,
    assetNetwork: f.assetNetwork,
    sourceWalletId: f.sourceWalletId,
    amount: f.amount,
    sourceAddress: f.sourceAddress,
    destinationAddress: f.destinationAddress,
    txHash: f.txHash,
    networkFee: f.networkFee,
    feeCurrency: f.feeCurrency,
    amountUSD: f.amountUSD,
    feeUSD: f.feeUSD,
    failureReason: r.status === 'Failed' ? r.failureReason : null,
    completedAt: TERMINAL_STATUSES.includes(r.status) ? iso(r.completedAt) : null,
  };
}

/**
 * transaction.created: the first event of the transaction's sequence, written in the statement that writes its
 * row (decision 0425).
 */
export function createdEvent(r: TransactionRecord, data: ReturnType<typeof transactionFields>) {
  return {
    tenantId: r.tenantId,
    eventType: 'transaction.created',
    entityType: 'transaction',
    entityId: r.id,
    data,
    sequence: 1,
  };
}

/**
 * transaction.status.updated for a move out of `previousStatus`, built from the moved record: its
 * `eventSequence` is the number the move's compare-and-set gave it (decision 0425). One per move.
 */
export function statusUpdatedEvent(r: TransactionRecord, previousStatus: CustodyTransactionStatus) {
  return {
    tenantId: r.tenantId,
    eventType: 'transaction.status.updated',
    entityType: 'transaction',
    entityId: r.id,
    data: statusUpdatedFields(r, previousStatus),
    sequence: r.eventSequence,
  };
}

/** balance.updated: a cache-invalidation signal, entityId `<vaultId>:<assetId>`. */
export function balanceUpdatedEvent(tenantId: string, vaultId: string, assetId: string) {
  return {
    tenantId,
    eventType: 'balance.updated',
    entityType: 'balance',
    entityId: `${vaultId}:${assetId}`,
    data: { vaultAccountId: vaultId, assetId },
  };
}
