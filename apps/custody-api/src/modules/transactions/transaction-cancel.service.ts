import { Injectable } from '@nestjs/common';
import type { CustodyTransactionStatus } from '@tessera/contracts';
import { conflict, forbidden, notFound } from '@tessera/platform';
import type { Caller } from '../../common/caller';
import { isUuid } from '../../common/validation';
import { ChainRouter } from '../chain/chain-router';
import { InsufficientFundsError } from '../ledger/ledger';
import { VaultsService } from '../vaults/vaults.service';
import { terminalDeltas } from './terminal-effects';
import {
  balanceUpdatedEvent,
  statusUpdatedEvent,
  type TransactionRecord,
  type TransactionType,
  transactionDto,
} from './transaction.record';
import { TransactionsRepository } from './transactions.repository';

/** Statuses a partner may cancel from: nothing has been broadcast yet (Fireblocks: before BROADCASTING). */
export const CANCELLABLE_STATUSES: CustodyTransactionStatus[] = ['Submitted', 'PendingSignature'];

/** The scope a cancel needs: the write scope of the transaction's type. Deposits have none. */
export const CANCEL_SCOPES: Partial<Record<TransactionType, string>> = {
  Withdrawal: 'withdrawals:write',
  InternalTransfer: 'transfers:write',
};

/**
 * POST /transactions/{id}/cancel: a move to Cancelled under the transaction's row lock (the lock the worker's
 * broadcast holds), with the ledger effect the worker applies on any non-Completed terminal state (a
 * withdrawal's hold released, a transfer moved back) and `transaction.status.updated` in the same database
 * transaction. Losing the row to the worker re-reads the transaction and decides again, so a cancel racing the
 * step Submitted → PendingSignature still succeeds, and one racing the broadcast gets 409. A withdrawal whose
 * chain says a signed send may be on it without being recorded (ChainAdapter.sendMayBeOnChain, decision 0440,
 * 0453): 409 too.
 */
@Injectable()
export class TransactionCancelService {
  constructor(
    private readonly repository: TransactionsRepository,
    private readonly vaults: VaultsService,
    private readonly chains: ChainRouter,
  ) {}

  async cancel(caller: Caller, id: string) {
    const writeScopes = Object.values(CANCEL_SCOPES);
    if (!writeScopes.some((s) => caller.scopes.includes(s))) {
      throw forbidden(`This API key lacks the scope ${writeScopes.join(' or ')}`);
    }
    // Each lost race means the worker moved the transaction one step on; after CANCELLABLE_STATUSES.length
    // losses it has left every cancellable status.
    for (let attempt = 0; attempt <= CANCELLABLE_STATUSES.length; attempt++) {
      const current = isUuid(id) ? await this.repository.find(caller, id) : undefined;
      if (!current) throw notFound('Transaction not found');
      const scope = CANCEL_SCOPES[current.type];
      if (!scope) throw conflict(`A ${current.type} cannot be cancelled`);
      if (!caller.scopes.includes(scope)) throw forbidden(`This API key lacks the scope ${scope}`);
      // Repeating a cancel that took effect answers the cancelled transaction (decision 0201).
      if (current.status === 'Cancelled') return transactionDto(current);
      if (!CANCELLABLE_STATUSES.includes(current.status)) {
        throw conflict(`The transaction is ${current.status} and can no longer be cancelled`);
      }
      const updated = await this.moveToCancelled(caller, current);
      if (updated) return transactionDto(updated);
    }
    throw conflict('The transaction can no longer be cancelled');
  }

  private async moveToCancelled(
    caller: Caller,
    current: TransactionRecord,
  ): Promise<TransactionRecord | undefined> {
    const deltas = terminalDeltas(current, 'Cancelled');
    const vaultIds = new Set([current.vaultId]);
    if (current.type === 'InternalTransfer' && current.destinationWalletId) {
      vaultIds.add((await this.vaults.walletOrThrow(caller, current.destinationWalletId)).vaultId);
    }
    try {
      // Under the row lock, which the worker's broadcast holds while it signs, commits its send intent and sends.
      return await this.repository.transitionWhileLocked(current.id, current.status, async (_, manager) => {
        // A send committed but not recorded (its step rolled back after the node may have taken it): the
        // transaction may be on the chain, and the worker's retry records it (decision 0440). Not cancellable.
        if (current.type === 'Withdrawal' && (await this.chains.sendMayBeOnChain(manager, current))) {
          throw conflict(
            'The withdrawal has been signed and may already be on the chain; it can no longer be cancelled',
          );
        }
        return {
          next: 'Cancelled',
          patch: { terminal: true },
          deltas,
          events: (t) => [
            statusUpdatedEvent(t, current.status),
            ...[...vaultIds].map((vaultId) => balanceUpdatedEvent(t.tenantId, vaultId, t.assetId)),
          ],
        };
      });
    } catch (err) {
      if (err instanceof InsufficientFundsError) {
        throw conflict(
          'The destination wallet no longer holds the transferred amount; the transfer cannot be cancelled',
        );
      }
      throw err;
    }
  }
}
