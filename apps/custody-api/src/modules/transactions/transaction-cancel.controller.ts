import { Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { type Caller, CurrentCaller } from '../../common/caller';
import { TransactionCancelService } from './transaction-cancel.service';

@ApiTags('transactions')
@ApiSecurity('signed')
@Controller()
export class TransactionCancelController {
  constructor(private readonly cancels: TransactionCancelService) {}

  /** Scope: the write scope of the transaction's type, checked once the transaction is known. */
  @Post('transactions/:id/cancel')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Cancel a Withdrawal or InternalTransfer not yet broadcast (Submitted, PendingSignature); ' +
      'scope withdrawals:write or transfers:write by type; 409 when its state no longer allows it',
  })
  cancel(@CurrentCaller() caller: Caller, @Param('id') id: string) {
    return this.cancels.cancel(caller, id);
  }
}
