import { Module } from '@nestjs/common';
import { AdvanceEnqueuer } from './advance-enqueuer';
import { ChainModule } from '../chain/chain.module';
import { TransactionsProcessor } from './transactions.processor';
import { TransactionsRepository } from './transactions.repository';

/** Worker role: the transaction state machine consumer. */
@Module({
  imports: [ChainModule],
  providers: [TransactionsRepository, TransactionsProcessor, AdvanceEnqueuer],
})
export class TransactionsProcessingModule {}
