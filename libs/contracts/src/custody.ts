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
