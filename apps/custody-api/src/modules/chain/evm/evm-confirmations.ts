import { Injectable, Logger } from '@nestjs/common';
import type { CustodyTransactionStatus } from '@tessera/contracts';
import { appendToOutbox } from '@tessera/platform';
import { encodeFunctionData, keccak256, type TransactionReceipt } from 'viem';
import { applyBalanceDeltas, type BalanceDelta, InsufficientFundsError } from '../../ledger/ledger';
import { terminalDeltas } from '../../transactions/terminal-effects';
import {
  balanceUpdatedEvent,
  statusUpdatedEvent,
  TERMINAL_STATUSES,
  type TransactionRecord,
} from '../../transactions/transaction.record';
import { TransactionsRepository, type TransitionMove } from '../../transactions/transactions.repository';
import { ChainRouter } from '../chain-router';
import { EvmKeys } from './evm-keys';
import { ERC20_TRANSFER_ABI, NodeRejectedError } from './evm-rpc';
import { EvmRepository, type OpenTransfer, type SendIntent } from './evm.repository';
import { evmThreshold } from './evm-settings';
import { notMoved, tokenAmountSent } from './evm-token';

/** A replacement must raise both fee caps by at least 10 % (geth, Hardhat); we bump by 25 %. */
const BUMP_PERCENT = 125n;

const TRACK_CONCURRENCY = 8;

export const REORGED = 'reorged';
export const REVERTED = 'Reverted on-chain (receipt status 0)';

/**
 * Moves EVM transactions by what the chain says: counts confirmations of deposits and credits them at the
 * asset's threshold; follows each withdrawal's receipt (Broadcasting → Confirming when mined, Completed or
 * Failed at the threshold by its receipt status, the real fee posted and the rest of the held fee released);
 * re-broadcasts a withdrawal stuck unmined with bumped fees; fails deposits a reorg took away.
 */
@Injectable()
export class EvmConfirmations {
  private readonly logger = new Logger(EvmConfirmations.name);
  private keys?: EvmKeys;

  constructor(
    private readonly chains: ChainRouter,
    private readonly repository: EvmRepository,
    private readonly transactions: TransactionsRepository,
  ) {}

  private get evm() {
    return this.chains.evm!;
  }

  /** Deposits still without a block once the scan reached the head: gone with a reorg. */
  async failOrphans(): Promise<void> {
    for (const o of await this.repository.orphanedDeposits(this.evm.settings.chainId)) {
      if (o.status === 'Completed') {
        // Never reversed automatically (the customer may have spent it) and never credited twice.
        await this.repository.flagOrphanedCredit(o.transactionId);
        this.logger.error(
          { transactionId: o.transactionId },
          'a credited deposit left the canonical chain: credit kept, flagged for review',
        );
        continue;
      }
      await this.fail(o.transactionId, REORGED, [], (manager) =>
        this.repository.markReorged(manager, o.transactionId, true),
      );
    }
  }

  /**
   * Settles every open transfer of a chain that is gone (decision 0467): each is Failed with `reason`, a deposit's
   * pending amount and a withdrawal's amount and fee hold released. Each is its own transaction, and a failed one
   * is left as it is, so a crash part-way is finished by the next round.
   */
  async failAllOpen(reason: string): Promise<number> {
    const open = await this.repository.openTransfers(this.evm.settings.chainId);
    for (const o of open) {
      if (o.direction === 'in') {
        await this.fail(o.transactionId, reason, [], (m) =>
          this.repository.markReorged(m, o.transactionId, true),
        );
      } else {
        await this.fail(o.transactionId, reason, this.feeDeltas(o, 0n), (m) =>
          this.repository.setChainState(m, o.transactionId, { confirmations: 0, settled: true }),
        );
      }
    }
    return open.length;
  }

  async track(): Promise<void> {
    const { settings, rpc } = this.evm;
    const head = await rpc.head();
    const open = await this.repository.openTransfers(settings.chainId);
    // A few at a time: each is a receipt lookup and at most one short database transaction.
    for (let i = 0; i < open.length; i += TRACK_CONCURRENCY) {
      await Promise.all(open.slice(i, i + TRACK_CONCURRENCY).map((o) => this.trackOne(o, head)));
    }
  }

  private async trackOne(o: OpenTransfer, head: bigint): Promise<void> {
    try {
      if (TERMINAL_STATUSES.includes(o.status as CustodyTransactionStatus)) {
        await this.repository.setChainState(undefined, o.transactionId, {
          confirmations: o.confirmations,
          settled: o.blockHash !== null || o.direction === 'out',
        });
      } else if (o.direction === 'in') {
        await this.trackDeposit(o, head);
      } else {
        await this.trackWithdrawal(o, head);
      }
    } catch (err) {
      this.logger.warn({ transactionId: o.transactionId, err: (err as Error).message }, 'tracking failed');
    }
  }

  private async trackDeposit(o: OpenTransfer, head: bigint): Promise<void> {
    if (o.blockNumber === null) return; // orphaned by a reorg, waiting to be found again
    const confirmations = Number(head - BigInt(o.blockNumber) + 1n);
    const threshold = evmThreshold(this.evm.settings, o.assetConfirmations);
    if (o.status === 'Confirming' && confirmations >= threshold) {
      const record = await this.transactions.load(o.transactionId);
      if (!record) return;
      await this.move(record, 'Completed', { networkFee: null }, terminalDeltas(record, 'Completed'), (m) =>
        this.repository.setChainState(m, o.transactionId, { confirmations, settled: true }),
      );
      return;
    }
    if (confirmations !== o.confirmations) {
      await this.repository.setChainState(undefined, o.transactionId, { confirmations });
    }
  }

  private async trackWithdrawal(open: OpenTransfer, head: bigint): Promise<void> {
    // A replacement committed before it was sent and never recorded may be the version the chain mines: settle
    // it before reading receipts, so every hash that can be mined under the nonce is looked at (decision 0449).
    const o = open.unrecordedReplacement
      ? await this.settleReplacement(open, open.unrecordedReplacement)
      : open;
    let receipt: TransactionReceipt | undefined;
    for (const hash of [...o.sentHashes].reverse()) {
      receipt = await this.evm.rpc.receipt(hash);
      if (receipt) break;
    }
    if (!receipt) {
      if (o.confirmations !== 0)
        await this.repository.setChainState(undefined, o.transactionId, { confirmations: 0 });
      const stuckFor = Date.now() - new Date(o.broadcastAt ?? Date.now()).getTime();
      if (o.status === 'Broadcasting' && stuckFor >= this.evm.settings.stuckAfterMs) await this.bump(o);
      return;
    }
    const confirmations = Number(head - receipt.blockNumber + 1n);
    const chainState = {
      confirmations,
      blockNumber: receipt.blockNumber,
      blockHash: receipt.blockHash,
      txHash: receipt.transactionHash,
    };
    let record = await this.transactions.load(o.transactionId);
    if (!record) return;
    if (record.status === 'Broadcasting') {
      const moved = await this.move(record, 'Confirming', { txHash: receipt.transactionHash }, [], (m) =>
        this.repository.setChainState(m, o.transactionId, chainState),
      );
      if (!moved) return;
      record = moved;
    } else {
      await this.repository.setChainState(undefined, o.transactionId, chainState);
    }
    if (
      record.status !== 'Confirming' ||
      confirmations < evmThreshold(this.evm.settings, o.assetConfirmations)
    ) {
      return;
    }
    const fee = receipt.gasUsed * receipt.effectiveGasPrice;
    // A token's success is what its Transfer logs moved, not the receipt's status alone (decision 0466).
    const amount = BigInt(o.amount);
    const sent =
      o.assetSymbol === 'ETH' || receipt.status !== 'success'
        ? amount
        : tokenAmountSent(receipt, this.evm.settings.usdtContract!, o.fromAddress);
    const succeeded = receipt.status === 'success' && sent === amount;
    const deltas = [...terminalDeltas(record, succeeded ? 'Completed' : 'Failed'), ...this.feeDeltas(o, fee)];
    const settle = (m: Parameters<Parameters<EvmRepository['inTransaction']>[0]>[0]) =>
      this.repository.setChainState(m, o.transactionId, { ...chainState, settled: true });
    if (succeeded) {
      await this.move(
        record,
        'Completed',
        { networkFee: String(fee), txHash: receipt.transactionHash },
        deltas,
        settle,
      );
    } else {
      const reason = receipt.status === 'success' ? notMoved(sent, amount) : REVERTED;
      if (sent !== 0n && sent !== amount) {
        this.logger.error(
          { transactionId: o.transactionId, sent: String(sent), amount: o.amount },
          'a token withdrawal moved another amount than it asked: failed, the address and the ledger now differ',
        );
      }
      await this.fail(o.transactionId, reason, this.feeDeltas(o, fee), settle, String(fee));
    }
  }

  /** The real fee posted from the hold, the rest of the hold released (native withdrawals only). */
  private feeDeltas(o: OpenTransfer, fee: bigint): BalanceDelta[] {
    if (o.feeHeld === null || o.feeWalletId === null) return [];
    const held = BigInt(o.feeHeld);
    const base = { walletId: o.feeWalletId, transactionId: o.transactionId };
    return [
      ...(fee > 0n ? [{ ...base, kind: 'fee-post' as const, locked: -fee, total: -fee }] : []),
      ...(held > fee
        ? [{ ...base, kind: 'fee-release' as const, locked: fee - held, available: held - fee }]
        : []),
    ];
  }

  /**
   * Re-signs a stuck withdrawal with the same nonce and fee caps raised by 25 % (or the current estimate, if
   * higher): whichever of the versions is mined settles it, the other can no longer be. The extra fee is held
   * first; a wallet that cannot cover it keeps waiting on the original.
   */
  private async bump(o: OpenTransfer): Promise<void> {
    const { settings, rpc } = this.evm;
    const sender = await this.repository.sender(this.repository.db.manager, o.walletId);
    if (!sender || o.nonce === null || o.gasLimit === null) return;
    const estimate = await rpc.fees();
    const max = (a: bigint, b: bigint) => (a > b ? a : b);
    const maxFeePerGas = max((BigInt(o.maxFeePerGas!) * BUMP_PERCENT) / 100n, estimate.maxFeePerGas);
    const maxPriorityFeePerGas = max(
      (BigInt(o.maxPriorityFeePerGas!) * BUMP_PERCENT) / 100n,
      estimate.maxPriorityFeePerGas,
    );
    const gasLimit = BigInt(o.gasLimit);
    const isToken = o.assetSymbol !== 'ETH';
    const newHeld = isToken ? null : gasLimit * maxFeePerGas;
    if (isToken) {
      // The replacement may cost more gas than the address was given for the original.
      const funded = await this.evm.adapter.fundGas(
        sender.tenantId,
        sender.environment,
        sender.address,
        gasLimit * maxFeePerGas,
      );
      if (funded === 'unfunded') {
        this.logger.warn({ transactionId: o.transactionId }, 'gas station cannot pay a fee bump; waiting');
        return;
      }
    }
    this.keys ??= new EvmKeys(settings.masterKey);
    const account = this.keys.account(sender.tenantId, sender.seedSealed, sender.derivationPath);
    const rawTx = await account.signTransaction({
      chainId: settings.chainId,
      type: 'eip1559',
      nonce: Number(o.nonce),
      to: (isToken ? settings.usdtContract! : o.destinationAddress) as `0x${string}`,
      value: isToken ? 0n : BigInt(o.amount),
      data: isToken
        ? encodeFunctionData({
            abi: ERC20_TRANSFER_ABI,
            functionName: 'transfer',
            args: [o.destinationAddress as `0x${string}`, BigInt(o.amount)],
          })
        : undefined,
      gas: gasLimit,
      maxFeePerGas,
      maxPriorityFeePerGas,
    });
    const record = await this.transactions.load(o.transactionId);
    if (!record) return;
    const replacement: SendIntent = {
      transactionId: o.transactionId,
      chainId: settings.chainId,
      fromAddress: o.fromAddress,
      nonce: Number(o.nonce),
      txHash: keccak256(rawTx),
      rawTx,
      gasLimit: o.gasLimit,
      maxFeePerGas: String(maxFeePerGas),
      maxPriorityFeePerGas: String(maxPriorityFeePerGas),
    };
    // Committed before the send (decision 0449): if the node takes the replacement and the transaction below then
    // rolls back (a lost answer, a crash), the next round finds it among the nonce's candidates and records it.
    await this.repository.recordSendIntent(replacement);
    try {
      await this.repository.recordReplacement(replacement, async (manager) => {
        if (newHeld !== null && o.feeHeld !== null && newHeld > BigInt(o.feeHeld)) {
          await this.holdExtraFee(manager, o, record, newHeld - BigInt(o.feeHeld));
        }
        // Sent while the new hold is uncommitted: if the node refuses, nothing is recorded.
        await rpc.sendRaw(rawTx);
        return newHeld;
      });
      this.logger.warn(
        { transactionId: o.transactionId, nonce: o.nonce },
        'stuck withdrawal re-broadcast with bumped fees',
      );
    } catch (err) {
      if (err instanceof InsufficientFundsError) {
        // Refused before the send: the replacement never left.
        await this.repository.dropSendIntent(o.transactionId);
        this.logger.warn({ transactionId: o.transactionId }, 'no balance left to bump the fee; waiting');
      } else if (err instanceof NodeRejectedError) {
        // Typically "nonce too low": a version was mined meanwhile; its receipt settles it next round.
        await this.repository.dropSendIntent(o.transactionId);
        this.logger.warn({ transactionId: o.transactionId, reason: err.message }, 'fee bump refused');
      } else {
        throw err;
      }
    }
  }

  /**
   * A replacement an earlier round committed and may have sent without recording it (decision 0449), settled as
   * decision 0440 settles a first send. The node has it (pending or mined), or takes the same bytes again: it is
   * one of the nonce's candidates, recorded as the bump would have recorded it (its hash beside the others, its
   * fee caps, the extra fee held at most what is available: it is out whatever the balance says now). The node
   * neither has it nor takes it (another version of the nonce was mined, or it can no longer pay): it was never
   * mined through this node, and the intent is dropped. Answers the transfer as it now stands.
   */
  private async settleReplacement(o: OpenTransfer, intent: SendIntent): Promise<OpenTransfer> {
    const { rpc } = this.evm;
    const log = { transactionId: o.transactionId, txHash: intent.txHash, nonce: intent.nonce };
    if (!(await rpc.holdsOrTakes(intent.txHash, intent.rawTx))) {
      this.logger.warn(log, 'an unrecorded fee-bump replacement is not on the chain; dropped');
      await this.repository.dropSendIntent(o.transactionId);
      return { ...o, unrecordedReplacement: null };
    }
    const record = await this.transactions.load(o.transactionId);
    if (!record) return o;
    this.logger.warn(log, 'recording a fee-bump replacement the node had accepted');
    const wanted = o.feeHeld === null ? null : BigInt(intent.gasLimit) * BigInt(intent.maxFeePerGas);
    let feeHeld = wanted;
    await this.repository.recordReplacement(intent, async (manager) => {
      if (wanted === null || o.feeHeld === null) return null;
      const held = BigInt(o.feeHeld);
      const available = await this.repository.lockAvailable(manager, o.feeWalletId!);
      const extra = wanted > held ? (wanted - held < available ? wanted - held : available) : 0n;
      feeHeld = held + extra;
      if (extra > 0n) await this.holdExtraFee(manager, o, record, extra);
      return feeHeld;
    });
    return {
      ...o,
      txHash: intent.txHash,
      sentHashes: o.sentHashes.includes(intent.txHash) ? o.sentHashes : [...o.sentHashes, intent.txHash],
      maxFeePerGas: intent.maxFeePerGas,
      maxPriorityFeePerGas: intent.maxPriorityFeePerGas,
      feeHeld: feeHeld === null ? o.feeHeld : String(feeHeld),
      broadcastAt: new Date(),
      unrecordedReplacement: null,
    };
  }

  /** The extra fee a replacement may cost, held on the fee wallet with its balance.updated event. */
  private async holdExtraFee(
    manager: Parameters<Parameters<EvmRepository['inTransaction']>[0]>[0],
    o: OpenTransfer,
    record: TransactionRecord,
    extra: bigint,
  ): Promise<void> {
    await applyBalanceDeltas(manager, [
      {
        walletId: o.feeWalletId!,
        transactionId: o.transactionId,
        kind: 'fee-hold',
        available: -extra,
        locked: extra,
      },
    ]);
    await appendToOutbox(manager, [balanceUpdatedEvent(record.tenantId, record.vaultId, record.assetId)]);
  }

  private async fail(
    transactionId: string,
    reason: string,
    extraDeltas: BalanceDelta[],
    alsoWrite: (manager: Parameters<Parameters<EvmRepository['inTransaction']>[0]>[0]) => Promise<void>,
    networkFee?: string,
  ): Promise<void> {
    // A concurrent move of the machine makes the compare-and-set miss: re-read and try again.
    for (let attempt = 0; attempt < 5; attempt++) {
      const record = await this.transactions.load(transactionId);
      if (!record) return;
      if (TERMINAL_STATUSES.includes(record.status)) {
        await this.repository.inTransaction(alsoWrite);
        return;
      }
      const moved = await this.move(
        record,
        'Failed',
        { failureReason: reason, networkFee: networkFee ?? null },
        [...terminalDeltas(record, 'Failed'), ...extraDeltas],
        alsoWrite,
      );
      if (moved) return;
    }
  }

  /** A compare-and-set move with its ledger effect, events and the chain row's update, in one transaction. */
  private move(
    record: TransactionRecord,
    next: CustodyTransactionStatus,
    patch: { txHash?: string; failureReason?: string; networkFee?: string | null },
    deltas: BalanceDelta[],
    alsoWrite: (manager: Parameters<Parameters<EvmRepository['inTransaction']>[0]>[0]) => Promise<void>,
  ): Promise<TransactionRecord | undefined> {
    const terminal = TERMINAL_STATUSES.includes(next);
    const move: TransitionMove = {
      next,
      patch: {
        txHash: patch.txHash ?? null,
        failureReason: patch.failureReason ?? null,
        terminal,
        networkFee: patch.networkFee ?? null,
      },
      deltas,
      events: (t) => [
        statusUpdatedEvent(t, record.status),
        ...(deltas.length > 0 ? [balanceUpdatedEvent(t.tenantId, t.vaultId, t.assetId)] : []),
      ],
    };
    return this.repository.inTransaction(async (manager) => {
      const updated = await this.transactions.applyTransition(manager, record.id, record.status, move);
      if (updated) await alsoWrite(manager);
      return updated;
    });
  }
}
