import { type ServiceDatabaseOptions, OutboxEventEntity, OutboxSequenceEntity } from '@tessera/platform';
import { AddressBookEntryEntity } from '../modules/address-book/entities/address-book-entry.entity';
import { AssetEntity } from '../modules/assets/entities/asset.entity';
import { TenantAssetEntity } from '../modules/assets/entities/tenant-asset.entity';
import { EvmBlockEntity } from '../modules/chain/evm/entities/evm-block.entity';
import { EvmChainEntity } from '../modules/chain/evm/entities/evm-chain.entity';
import { EvmGasTopUpIntentEntity } from '../modules/chain/evm/entities/evm-gas-top-up-intent.entity';
import { EvmCursorEntity } from '../modules/chain/evm/entities/evm-cursor.entity';
import { EvmNonceEntity } from '../modules/chain/evm/entities/evm-nonce.entity';
import { EvmTransferEntity } from '../modules/chain/evm/entities/evm-transfer.entity';
import { EvmSendIntentEntity } from '../modules/chain/evm/entities/evm-send-intent.entity';
import { ReconciliationFindingEntity } from '../modules/reconciliation/entities/reconciliation-finding.entity';
import { ReconciliationRunEntity } from '../modules/reconciliation/entities/reconciliation-run.entity';
import { BalanceEntity } from '../modules/ledger/balance.entity';
import { LedgerEntryEntity } from '../modules/ledger/ledger-entry.entity';
import { PolicyDecisionEntity } from '../modules/policies/entities/policy-decision.entity';
import { WithdrawalApprovalEntity } from '../modules/policies/entities/withdrawal-approval.entity';
import { WithdrawalPolicyEntity } from '../modules/policies/entities/withdrawal-policy.entity';
import { ApiKeyEntity } from '../modules/tenants/entities/api-key.entity';
import { TenantEntity } from '../modules/tenants/entities/tenant.entity';
import { IdempotencyKeyEntity } from '../modules/transactions/entities/idempotency-key.entity';
import { TransactionEntity } from '../modules/transactions/entities/transaction.entity';
import { VaultEntity } from '../modules/vaults/entities/vault.entity';
import { WalletAddressEntity } from '../modules/vaults/entities/wallet-address.entity';
import { WalletEntity } from '../modules/vaults/entities/wallet.entity';
import { migrations } from './migrations';

export const SCHEMA = 'custody';
export const entities = [
  TenantEntity,
  ApiKeyEntity,
  AssetEntity,
  VaultEntity,
  WalletEntity,
  WalletAddressEntity,
  BalanceEntity,
  LedgerEntryEntity,
  AddressBookEntryEntity,
  TransactionEntity,
  IdempotencyKeyEntity,
  OutboxEventEntity,
  OutboxSequenceEntity,
  TenantAssetEntity,
  EvmCursorEntity,
  EvmBlockEntity,
  EvmNonceEntity,
  EvmChainEntity,
  EvmTransferEntity,
  EvmSendIntentEntity,
  EvmGasTopUpIntentEntity,
  WithdrawalPolicyEntity,
  WithdrawalApprovalEntity,
  PolicyDecisionEntity,
  ReconciliationRunEntity,
  ReconciliationFindingEntity,
];

export const databaseOptions = (url: string): ServiceDatabaseOptions => ({
  url,
  schema: SCHEMA,
  entities,
  migrations,
});
