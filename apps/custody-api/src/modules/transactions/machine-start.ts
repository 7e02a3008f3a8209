import type { FollowUpJob, RelayedEvent } from '@tessera/platform';
import type { ChainAdapter } from '../chain/chain-adapter';
import { advanceJob } from './advance-enqueuer';

/**
 * Outbox relay follow-up (worker role): a committed `transaction.created` starts that transaction's state
 * machine. The API role then touches no queue on the create path, and a transaction can never be committed
 * without its first step being enqueued (the relay re-sends until it has stamped the row; the job id makes a
 * repeat a no-op).
 */
export function startMachineOnCreated(chain: ChainAdapter) {
  return (event: RelayedEvent): FollowUpJob<'CUSTODY_TRANSACTION_ADVANCE'>[] =>
    event.eventType === 'transaction.created' ? [advanceJob(chain, event.entityId, 'Submitted')] : [];
}
