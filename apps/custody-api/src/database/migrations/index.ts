import { withOutboxMigrations } from '@tessera/platform';
import { Init1795220342744 } from './1795220342744-Init';
import { CustodyCore1795222478689 } from './1795222478689-CustodyCore';
import { InFlightIndex1795231000000 } from './1795231000000-InFlightIndex';
import { TenantAssets1795232000000 } from './1795232000000-TenantAssets';
import { EvmChain1795280000000 } from './1795280000000-EvmChain';
import { WithdrawalPolicies1795400000000 } from './1795400000000-WithdrawalPolicies';
import { Reconciliation1795410000002 } from './1795410000002-Reconciliation';
import { WholeBatchCheck1795470000000 } from './1795470000000-WholeBatchCheck';
import { TransactionEventSequence1795520000000 } from './1795520000000-TransactionEventSequence';
import { UnfinishedTransactionsIndex1795550000000 } from './1795550000000-UnfinishedTransactionsIndex';
import { EvmSendIntents1795570000002 } from './1795570000002-EvmSendIntents';
import { CanonicalAddresses1795600000444 } from './1795600000444-CanonicalAddresses';
import { EvmGasTopUpIntents1795600000480 } from './1795600000480-EvmGasTopUpIntents';
import { EvmChains1795600003000 } from './1795600003000-EvmChains';

/** Every migration of schema "custody", oldest first: its own and the platform's outbox migrations. */
export const migrations = withOutboxMigrations([
  Init1795220342744,
  CustodyCore1795222478689,
  InFlightIndex1795231000000,
  TenantAssets1795232000000,
  EvmChain1795280000000,
  WithdrawalPolicies1795400000000,
  Reconciliation1795410000002,
  WholeBatchCheck1795470000000,
  TransactionEventSequence1795520000000,
  UnfinishedTransactionsIndex1795550000000,
  EvmSendIntents1795570000002,
  CanonicalAddresses1795600000444,
  EvmGasTopUpIntents1795600000480,
  EvmChains1795600003000,
]);
