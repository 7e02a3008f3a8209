import { Module } from '@nestjs/common';
import { AdvanceEnqueuer } from './advance-enqueuer';
import { ApprovalExpirySweeper } from './approval-expiry-sweeper';
import { ApprovedStarts } from './approved-starts';
import { ChainModule } from '../chain/chain.module';
import { EvmChainIdentity } from '../chain/evm/evm-chain-identity';
import { EvmConfirmations } from '../chain/evm/evm-confirmations';
import { EvmDepositScanner } from '../chain/evm/evm-deposit-scanner';
import { EvmWatcher } from '../chain/evm/evm-watcher';
import { StepBatches } from './step-batches';
import { StuckTransactionSweeper } from './stuck-transaction-sweeper';
import { StuckTransactionsRepository } from './stuck-transactions.repository';
import { TransactionsProcessor } from './transactions.processor';
import { TransactionsRepository } from './transactions.repository';
import { WithdrawalApprovalsRepository } from './withdrawal-approvals.repository';

/**
 * Worker role: the transaction state machine consumer, the sweeper that re-drives lost steps, and the EVM
 * chain watcher (deposits, confirmations, receipts; idle unless CHAIN_EVM_RPC_URL is set), the expiry of
 * withdrawal approval windows, and the start of approved withdrawals (ApprovedStarts, decision 0491).
 */
@Module({
  imports: [ChainModule],
  providers: [
    TransactionsRepository,
    TransactionsProcessor,
    StepBatches,
    AdvanceEnqueuer,
    StuckTransactionsRepository,
    StuckTransactionSweeper,
    EvmDepositScanner,
    EvmConfirmations,
    EvmChainIdentity,
    EvmWatcher,
    WithdrawalApprovalsRepository,
    ApprovalExpirySweeper,
    ApprovedStarts,
  ],
})
export class TransactionsProcessingModule {}
