import type { CustodyTransactionStatus } from '@tessera/contracts';
import type { BalanceDelta } from '../ledger/ledger';
import type { TransactionRecord } from './transaction.record';

/**
 * The ledger effect of entering a terminal state, shared by the worker (Completed, Failed) and the partner's
 * cancel (Cancelled):
 * - a withdrawal posts its hold at Completed and releases it otherwise;
 * - a deposit credits its pending amount at Completed and drops it otherwise;
 * - an internal transfer moved both balances at creation, so Completed changes nothing and Failed or
 *   Cancelled moves the amount back (`transfer-reversal-*`). The reversal fails with InsufficientFundsError
 *   when the destination no longer holds the amount.
 */
export function terminalDeltas(t: TransactionRecord, status: CustodyTransactionStatus): BalanceDelta[] {
  const units = BigInt(t.amount);
  const base = { walletId: t.walletId, transactionId: t.id };
  if (t.type === 'Withdrawal') {
    if (status === 'Completed') return [{ ...base, kind: 'post', locked: -units, total: -units }];
    return [{ ...base, kind: 'release', locked: -units, available: units }];
  }
  if (t.type === 'Deposit') {
    if (status === 'Completed') {
      return [{ ...base, kind: 'deposit-credit', pending: -units, total: units, available: units }];
    }
    return [{ ...base, kind: 'deposit-drop', pending: -units }];
  }
  if (status === 'Completed' || !t.sourceWalletId || !t.destinationWalletId) return [];
  return [
    {
      walletId: t.destinationWalletId,
      transactionId: t.id,
      kind: 'transfer-reversal-out',
      total: -units,
      available: -units,
    },
    {
      walletId: t.sourceWalletId,
      transactionId: t.id,
      kind: 'transfer-reversal-in',
      total: units,
      available: units,
    },
  ];
}
