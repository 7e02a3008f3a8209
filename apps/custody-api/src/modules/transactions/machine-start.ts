import type { FollowUpJob, RelayedEvent } from '@tessera/platform';
import { advanceJobId } from './advance-enqueuer';

/**
 * Outbox relay follow-up (worker role): a committed `transaction.created` starts that transaction's state
 * machine. The API role then touches no queue on the create path, and a transaction can never be committed
 * without its first step being enqueued (the relay re-sends until the row is stamped; the job id makes a
 * repeat a no-op). `stepDelayMs` is the chain's delay before the first move (CHAIN_SIM_STEP_DELAY_MS).
 */
export function startMachineOnCreated(stepDelayMs: number) {
  return (event: RelayedEvent): FollowUpJob<'CUSTODY_TRANSACTION_ADVANCE'>[] =>
    event.eventType === 'transaction.created'
      ? [
          {
            job: 'CUSTODY_TRANSACTION_ADVANCE',
            jobId: advanceJobId(event.entityId, 'Submitted'),
            payload: { transactionId: event.entityId, expectedStatus: 'Submitted' },
            delayMs: stepDelayMs,
          },
        ]
      : [];
}
