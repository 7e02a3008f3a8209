import { withOutboxMigrations } from '@tessera/platform';
import { Init1795220341858 } from './1795220341858-Init';
import { Core1795222519808 } from './1795222519808-Core';
import { ReviewColumns1795231000000 } from './1795231000000-ReviewColumns';
import { Questionnaires1795260000000 } from './1795260000000-Questionnaires';
import { Checks1795270000000 } from './1795270000000-Checks';
import { UboRollUp1795300000000 } from './1795300000000-UboRollUp';
import { ChecksWakeAfterCommit1795510000000 } from './1795510000000-ChecksWakeAfterCommit';
import { ApplicantEventSequence1795530000000 } from './1795530000000-ApplicantEventSequence';
import { EnrollmentsReplaced1795570000003 } from './1795570000003-EnrollmentsReplaced';
import { EnrollmentUploads1795600000450 } from './1795600000450-EnrollmentUploads';

/** Every migration of schema "verification", oldest first: its own and the platform's outbox migrations. */
export const migrations = withOutboxMigrations([
  Init1795220341858,
  Core1795222519808,
  ReviewColumns1795231000000,
  Questionnaires1795260000000,
  Checks1795270000000,
  UboRollUp1795300000000,
  ChecksWakeAfterCommit1795510000000,
  ApplicantEventSequence1795530000000,
  EnrollmentsReplaced1795570000003,
  EnrollmentUploads1795600000450,
]);
