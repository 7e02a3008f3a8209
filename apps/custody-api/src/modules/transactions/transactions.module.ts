import { Module } from '@nestjs/common';
import { AdvanceEnqueuer } from './advance-enqueuer';
import { AddressBookModule } from '../address-book/address-book.module';
import { AssetsModule } from '../assets/assets.module';
import { ChainModule } from '../chain/chain.module';
import { VaultsModule } from '../vaults/vaults.module';
import { TransactionsController } from './transactions.controller';
import { TransactionWriter } from './transaction-writer';
import { TransactionsRepository } from './transactions.repository';
import { TransactionsService } from './transactions.service';

/** API role: create, read and list transactions; the machine runs in the worker role. */
@Module({
  imports: [VaultsModule, AssetsModule, AddressBookModule, ChainModule],
  controllers: [TransactionsController],
  providers: [TransactionsRepository, TransactionWriter, TransactionsService, AdvanceEnqueuer],
})
export class TransactionsModule {}
