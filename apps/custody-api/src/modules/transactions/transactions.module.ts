import { Module } from '@nestjs/common';
import { AddressBookModule } from '../address-book/address-book.module';
import { AssetsModule } from '../assets/assets.module';
import { VaultsModule } from '../vaults/vaults.module';
import { TransactionCancelController } from './transaction-cancel.controller';
import { TransactionCancelService } from './transaction-cancel.service';
import { TransactionsController } from './transactions.controller';
import { TransactionWriter } from './transaction-writer';
import { TransactionsRepository } from './transactions.repository';
import { TransactionsService } from './transactions.service';

/** API role: create, read, list and cancel transactions; the machine runs in the worker role. */
@Module({
  imports: [VaultsModule, AssetsModule, AddressBookModule],
  controllers: [TransactionsController, TransactionCancelController],
  providers: [TransactionsRepository, TransactionWriter, TransactionsService, TransactionCancelService],
})
export class TransactionsModule {}
