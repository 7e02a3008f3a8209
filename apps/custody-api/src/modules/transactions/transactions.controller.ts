import { Body, Controller, Get, Headers, Param, Post, Query } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { type Caller, CurrentCaller, RequireScope } from '../../common/caller';
import { TransactionsService } from './transactions.service';

@ApiTags('transactions')
@ApiSecurity('signed')
@Controller()
export class TransactionsController {
  constructor(private readonly transactions: TransactionsService) {}

  @Post('transactions/transfer')
  @RequireScope('transfers:write')
  @ApiHeader({ name: 'Idempotency-Key', required: true })
  @ApiOperation({ summary: 'Internal transfer {sourceWalletId, destinationWalletId, amount, note?}' })
  transfer(
    @CurrentCaller() caller: Caller,
    @Headers('idempotency-key') key: string | undefined,
    @Body() body: unknown,
  ) {
    return this.transactions.transfer(caller, key, body);
  }

  @Post('transactions/withdraw')
  @RequireScope('withdrawals:write')
  @ApiHeader({ name: 'Idempotency-Key', required: true })
  @ApiOperation({
    summary:
      'Withdrawal to an address-book destination {sourceWalletId, destinationAddress, destinationTag?, amount, note?}',
  })
  withdraw(
    @CurrentCaller() caller: Caller,
    @Headers('idempotency-key') key: string | undefined,
    @Body() body: unknown,
  ) {
    return this.transactions.withdraw(caller, key, body);
  }

  @Get('transactions')
  @RequireScope('transactions:read')
  @ApiOperation({
    summary: 'List: take (default 20, max 200), cursor, type, status, vaultId, walletId, since',
  })
  list(@CurrentCaller() caller: Caller, @Query() query: unknown) {
    return this.transactions.list(caller, query);
  }

  @Get('transactions/:id')
  @RequireScope('transactions:read')
  get(@CurrentCaller() caller: Caller, @Param('id') id: string) {
    return this.transactions.get(caller, id);
  }

  @Post('sandbox/deposits')
  @RequireScope('sandbox:write')
  @ApiTags('sandbox')
  @ApiOperation({ summary: 'Sandbox only: inject a deposit {walletId, amount, sourceAddress?}' })
  deposit(@CurrentCaller() caller: Caller, @Body() body: unknown) {
    return this.transactions.deposit(caller, body);
  }
}
