import { Module } from '@nestjs/common';
import { AdvanceEnqueuer } from './advance-enqueuer';
import { ChainModule } from '../chain/chain.module';
import { StuckTransactionSweeper } from './stuck-transaction-sweeper';
import { StuckTransactionsRepository } from './stuck-transactions.repository';
import { TransactionsProcessor } from './transactions.processor';
import { TransactionsRepository } from './transactions.repository';

/** Worker role: the transaction state machine consumer and the sweeper that re-drives lost steps. */
@Module({
  imports: [ChainModule],
  providers: [
    TransactionsRepository,
    TransactionsProcessor,
    AdvanceEnqueuer,
    StuckTransactionsRepository,
    StuckTransactionSweeper,
  ],
})
export class TransactionsProcessingModule {}
