import { Module } from '@nestjs/common';
import { AddressBookModule } from '../address-book/address-book.module';
import { AssetsModule } from '../assets/assets.module';
import { ChainModule } from '../chain/chain.module';
import { PoliciesModule } from '../policies/policies.module';
import { VaultsModule } from '../vaults/vaults.module';
import { TransactionApprovalsController } from './transaction-approvals.controller';
import { TransactionApprovalsService } from './transaction-approvals.service';
import { TransactionCancelController } from './transaction-cancel.controller';
import { TransactionCancelService } from './transaction-cancel.service';
import { TransactionsController } from './transactions.controller';
import { TransactionWriter } from './transaction-writer';
import { TransactionsRepository } from './transactions.repository';
import { TransactionsService } from './transactions.service';
import { WithdrawalApprovalsRepository } from './withdrawal-approvals.repository';

/** API role: create, read, list and cancel transactions; the machine runs in the worker role. */
@Module({
  imports: [VaultsModule, AssetsModule, AddressBookModule, PoliciesModule, ChainModule],
  controllers: [TransactionsController, TransactionCancelController, TransactionApprovalsController],
  providers: [
    TransactionsRepository,
    TransactionWriter,
    TransactionsService,
    TransactionCancelService,
    WithdrawalApprovalsRepository,
    TransactionApprovalsService,
  ],
})
export class TransactionsModule {}
