import type { EntityManager } from 'typeorm';

/** The kinds of ledger entry (`ledger_entries.kind`): what moved one wallet's balance buckets. */
export const LEDGER_KINDS = [
  // a withdrawal: its amount held at creation, posted at Completed, released otherwise
  'hold',
  'post',
  'release',
  // an EVM withdrawal's network fee: the maximum held at the send (and a bump), the real fee posted, the rest released
  'fee-hold',
  'fee-post',
  'fee-release',
  // an internal transfer, moved at creation, moved back when it fails or is cancelled
  'transfer-out',
  'transfer-in',
  'transfer-reversal-out',
  'transfer-reversal-in',
  // a deposit: pending when found, credited at Completed, dropped otherwise
  'deposit-pending',
  'deposit-credit',
  'deposit-drop',
] as const;

export type LedgerKind = (typeof LEDGER_KINDS)[number];

/** The entries of internal transfers: ledger moves between wallets that move nothing on the chain (decision 0444). */
export const INTERNAL_TRANSFER_KINDS: readonly LedgerKind[] = [
  'transfer-out',
  'transfer-in',
  'transfer-reversal-out',
  'transfer-reversal-in',
];

/** A change of one wallet's balance buckets, in base units. */
export interface BalanceDelta {
  walletId: string;
  transactionId: string;
  kind: LedgerKind;
  total?: bigint;
  available?: bigint;
  pending?: bigint;
  locked?: bigint;
}

export class InsufficientFundsError extends Error {
  constructor(readonly walletId: string) {
    super('Insufficient available balance');
  }
}

/**
 * Applies deltas to the balance rows and appends the matching ledger entries, inside the caller's
 * transaction. Rows are updated in wallet-id order so two transfers in opposite directions cannot
 * deadlock. A debit that would take `available` below zero matches no row and raises
 * InsufficientFundsError (the CHECK constraint is the last line of defence).
 */
export async function applyBalanceDeltas(manager: EntityManager, deltas: BalanceDelta[]): Promise<void> {
  const ordered = [...deltas].sort((a, b) =>
    a.walletId < b.walletId ? -1 : a.walletId > b.walletId ? 1 : 0,
  );
  for (const d of ordered) {
    const available = d.available ?? 0n;
    const rows: unknown[] = await manager.query(
      `UPDATE "balances" SET "total" = "total" + $2, "available" = "available" + $3,
         "pending" = "pending" + $4, "locked" = "locked" + $5, "updated_at" = now()
       WHERE "wallet_id" = $1 AND "available" + $3 >= 0
       RETURNING "wallet_id"`,
      [d.walletId, String(d.total ?? 0n), String(available), String(d.pending ?? 0n), String(d.locked ?? 0n)],
    );
    if (rowsOf(rows).length === 0) throw new InsufficientFundsError(d.walletId);
  }
  const values: string[] = [];
  const params: unknown[] = [];
  for (const d of deltas) {
    const n = params.length;
    values.push(`(uuidv7(), $${n + 1}, $${n + 2}, $${n + 3}, $${n + 4}, $${n + 5}, $${n + 6}, $${n + 7})`);
    params.push(
      d.walletId,
      d.transactionId,
      d.kind,
      String(d.total ?? 0n),
      String(d.available ?? 0n),
      String(d.pending ?? 0n),
      String(d.locked ?? 0n),
    );
  }
  if (values.length > 0) {
    await manager.query(
      `INSERT INTO "ledger_entries" ("id", "wallet_id", "transaction_id", "kind", "total_delta", "available_delta",
         "pending_delta", "locked_delta") VALUES ${values.join(', ')}`,
      params,
    );
  }
}

/** UPDATE … RETURNING through manager.query yields [rows, count] with the pg driver. */
export function rowsOf<T>(result: unknown): T[] {
  if (
    Array.isArray(result) &&
    result.length === 2 &&
    Array.isArray(result[0]) &&
    typeof result[1] === 'number'
  ) {
    return result[0] as T[];
  }
  return result as T[];
}
