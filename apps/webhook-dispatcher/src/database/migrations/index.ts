import { TimeOrderedIds1795560000000 } from '@tessera/platform';
import { Init1795220333637 } from './1795220333637-Init';
import { Deliveries1795222450292 } from './1795222450292-Deliveries';
import { DeliverySequence1795410000001 } from './1795410000001-DeliverySequence';
import { InboxRetention1795550000001 } from './1795550000001-InboxRetention';
import { DeliveryRetention1795570000001 } from './1795570000001-DeliveryRetention';
import { SecretHandover1795600000460 } from './1795600000460-SecretHandover';
import { DeliveryClaims1795600000461 } from './1795600000461-DeliveryClaims';

/** Every migration of schema "webhooks", oldest first. */
export const migrations = [
  Init1795220333637,
  Deliveries1795222450292,
  DeliverySequence1795410000001,
  InboxRetention1795550000001,
  // The platform's, as the producers' outbox migrations are (docs/decisions/0432).
  TimeOrderedIds1795560000000,
  DeliveryRetention1795570000001,
  SecretHandover1795600000460,
  DeliveryClaims1795600000461,
];
