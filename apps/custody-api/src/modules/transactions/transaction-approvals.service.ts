import { Injectable } from '@nestjs/common';
import { approveWithdrawalInput, rejectWithdrawalInput } from '@tessera/contracts';
import { conflict, forbidden, notFound } from '@tessera/platform';
import type { Caller } from '../../common/caller';
import { isUuid, parse } from '../../common/validation';
import { PoliciesService } from '../policies/policies.service';
import { transactionDto } from './transaction.record';
import { TransactionsRepository } from './transactions.repository';
import { type VoteAction, WithdrawalApprovalsRepository } from './withdrawal-approvals.repository';

/**
 * POST /transactions/{id}/approve and /reject (scope withdrawals:approve). Only the named approvers of the
 * withdrawal's request may vote, never the key that requested it (403). The quorum's commit is what starts
 * the machine: the worker's ApprovedStarts finds the approved withdrawal in Postgres and enqueues its start, so
 * a vote never waits on Redis (decision 0491). A rejection cancels the withdrawal and releases its hold
 * (decision 0220).
 */
@Injectable()
export class TransactionApprovalsService {
  constructor(
    private readonly transactions: TransactionsRepository,
    private readonly approvals: WithdrawalApprovalsRepository,
    private readonly policies: PoliciesService,
  ) {}

  approve(caller: Caller, id: string, input: unknown) {
    const body = parse(approveWithdrawalInput, input);
    return this.vote(caller, id, 'approve', body.note ?? null);
  }

  reject(caller: Caller, id: string, input: unknown) {
    const body = parse(rejectWithdrawalInput, input);
    return this.vote(caller, id, 'reject', body.reason ?? null);
  }

  private async vote(caller: Caller, id: string, action: VoteAction, text: string | null) {
    const record = isUuid(id) ? await this.transactions.find(caller, id) : undefined;
    if (!record) throw notFound('Transaction not found');
    const outcome =
      record.type === 'Withdrawal'
        ? await this.approvals.vote(record, caller.apiKey, action, text)
        : ({ kind: 'no-approval' } as const);
    switch (outcome.kind) {
      case 'no-approval':
        throw conflict('This transaction needs no approval');
      case 'self':
        throw forbidden('The API key that requested a withdrawal cannot approve or reject it');
      case 'not-approver':
        throw forbidden('This API key is not a named approver of this withdrawal');
      case 'closed':
        throw conflict(`The approval request is already ${outcome.status}`);
      case 'window-closed':
        throw conflict('The approval window has closed; the withdrawal is being cancelled');
      case 'already-voted':
        throw conflict('This API key has already approved this withdrawal');
      default:
        break;
    }
    return this.view(caller, record.id);
  }

  async view(caller: Caller, id: string) {
    const record = await this.transactions.find(caller, id);
    if (!record) throw notFound('Transaction not found');
    return { ...transactionDto(record), ...(await this.policies.approvalFields(record.id, record.status)) };
  }
}
