import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { type Caller, CurrentCaller, RequireScope } from '../../common/caller';
import { TransactionApprovalsService } from './transaction-approvals.service';

@ApiTags('transactions')
@ApiSecurity('signed')
@Controller('transactions/:id')
export class TransactionApprovalsController {
  constructor(private readonly approvals: TransactionApprovalsService) {}

  @Post('approve')
  @HttpCode(200)
  @RequireScope('withdrawals:approve')
  @ApiOperation({
    summary:
      'Approve a withdrawal waiting for approvals {note?}; named approvers only, never the requesting key (403)',
  })
  approve(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.approvals.approve(caller, id, body);
  }

  @Post('reject')
  @HttpCode(200)
  @RequireScope('withdrawals:approve')
  @ApiOperation({
    summary: 'Reject a withdrawal waiting for approvals {reason?}: it is Cancelled and its hold released',
  })
  reject(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.approvals.reject(caller, id, body);
  }
}
