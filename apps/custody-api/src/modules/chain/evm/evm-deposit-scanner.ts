import { Injectable, Logger } from '@nestjs/common';
import { timeOrderedId } from '@tessera/platform';
import { getAddress } from 'viem';
import { ChainRouter } from '../chain-router';
import { TransactionsRepository } from '../../transactions/transactions.repository';
import { balanceUpdatedEvent, createdEvent, transactionFields } from '../../transactions/transaction.record';
import type { FullBlock } from './evm-rpc';
import { EvmRepository, type NewDeposit, type WatchedAddress } from './evm.repository';

/** Block hashes kept for the reorg walk-back: deeper reorgs than this are flagged, not unwound. */
export const KEPT_BLOCKS = 256;

interface FoundDeposit extends NewDeposit {
  wallet: WatchedAddress;
  amount: bigint;
}

/**
 * Finds deposits to live ETH and USDT deposit addresses, block by block from a stored cursor: native
 * transfers in each block's transactions and the USDT contract's Transfer logs. A batch of blocks is committed
 * in one database transaction with the deposits it holds, its block hashes and the cursor after it, so a
 * restart resumes at the first unscanned block, and a rescanned transfer is recognised by (tx hash, log index).
 * Before each step the stored hash of the last scanned block is checked against the node: a mismatch is a
 * reorg (docs/decisions/0211).
 */
@Injectable()
export class EvmDepositScanner {
  private readonly logger = new Logger(EvmDepositScanner.name);

  constructor(
    private readonly chains: ChainRouter,
    private readonly repository: EvmRepository,
    private readonly transactions: TransactionsRepository,
  ) {}

  private get evm() {
    return this.chains.evm!;
  }

  /** One scan step: returns true once the cursor has passed the head. */
  async step(): Promise<boolean> {
    const { settings, rpc } = this.evm;
    const chainId = settings.chainId;
    const head = await rpc.head();
    const next = (await this.repository.cursor(chainId)) ?? BigInt(settings.startBlock);
    const lastHash = next > 0n ? await this.repository.storedHash(chainId, next - 1n) : undefined;
    if (lastHash !== undefined) {
      const canonical = next - 1n <= head ? await rpc.blockHash(next - 1n) : undefined;
      if (canonical !== lastHash) {
        await this.unwind(next);
        return false;
      }
    }
    if (next > head) return true;
    const to = next + BigInt(settings.scanBatch) - 1n < head ? next + BigInt(settings.scanBatch) - 1n : head;
    const [blocks, logs] = await Promise.all([
      rpc.blocks(next, to),
      settings.usdtContract ? rpc.tokenTransfers(settings.usdtContract, next, to) : Promise.resolve([]),
    ]);
    if (!blocks) return false; // the head moved back meanwhile: the next step sees the reorg
    let parent = lastHash;
    for (const block of blocks) {
      if (parent !== undefined && block.parentHash !== parent) return false; // changed while fetched
      parent = block.hash!;
    }
    const hashes = new Map(blocks.map((b) => [b.number!, b.hash!]));
    if (logs.some((l) => hashes.get(l.blockNumber) !== l.blockHash)) return false;

    const watched = await this.repository.watchedAddresses();
    const found = this.deposits(chainId, blocks, logs, watched);
    await this.repository.inTransaction(async (manager) => {
      const created = await this.repository.claimDeposits(manager, found);
      const records = await this.transactions.insertDeposits(
        manager,
        found
          .filter((d) => created.has(d.transactionId))
          .map((d) => ({
            id: d.transactionId,
            tenantId: d.wallet.tenantId,
            vaultId: d.wallet.vaultId,
            assetId: d.wallet.assetId,
            walletId: d.wallet.walletId,
            amount: d.amount,
            sourceAddress: d.fromAddress,
            destinationAddress: d.toAddress,
            txHash: d.txHash,
          })),
        (r) => [createdEvent(r, transactionFields(r)), balanceUpdatedEvent(r.tenantId, r.vaultId, r.assetId)],
      );
      for (const r of records) {
        this.logger.log({ transactionId: r.id, txHash: r.txHash, asset: r.assetSymbol }, 'deposit detected');
      }
      await this.repository.advanceCursor(
        manager,
        chainId,
        blocks.map((b) => ({ number: b.number!, hash: b.hash! })),
        to + 1n,
        KEPT_BLOCKS,
      );
    });
    return to >= head;
  }

  private deposits(
    chainId: number,
    blocks: FullBlock[],
    logs: Awaited<ReturnType<NonNullable<ChainRouter['evm']>['rpc']['tokenTransfers']>>,
    watched: WatchedAddress[],
  ): FoundDeposit[] {
    const eth = new Map<string, WatchedAddress>();
    const usdt = new Map<string, WatchedAddress>();
    for (const w of watched) (w.assetSymbol === 'ETH' ? eth : usdt).set(w.address, w);
    const found: FoundDeposit[] = [];
    for (const block of blocks) {
      for (const tx of block.transactions) {
        const wallet = tx.to ? eth.get(tx.to.toLowerCase()) : undefined;
        if (!wallet || tx.value <= 0n) continue;
        found.push({
          transactionId: timeOrderedId(),
          chainId,
          txHash: tx.hash,
          logIndex: -1,
          fromAddress: getAddress(tx.from),
          toAddress: getAddress(tx.to!),
          blockNumber: block.number!,
          blockHash: block.hash!,
          wallet,
          amount: tx.value,
        });
      }
    }
    for (const l of logs) {
      const wallet = usdt.get(l.to.toLowerCase());
      if (!wallet || l.value <= 0n) continue;
      found.push({
        transactionId: timeOrderedId(),
        chainId,
        txHash: l.txHash,
        logIndex: l.logIndex,
        fromAddress: getAddress(l.from),
        toAddress: getAddress(l.to),
        blockNumber: l.blockNumber,
        blockHash: l.blockHash,
        wallet,
        amount: l.value,
      });
    }
    return found;
  }

  /** Walks back to the newest stored block the node still has, and rescans from the block after it. */
  private async unwind(next: bigint): Promise<void> {
    const { settings, rpc } = this.evm;
    const stored = await this.repository.storedBlocks(settings.chainId, next, KEPT_BLOCKS);
    let ancestor: bigint | undefined;
    for (const block of stored) {
      if ((await rpc.blockHash(block.number)) === block.hash) {
        ancestor = block.number;
        break;
      }
    }
    if (ancestor === undefined) {
      ancestor = (stored[stored.length - 1]?.number ?? next) - 1n;
      this.logger.error({ from: String(ancestor + 1n) }, 'reorg deeper than the kept block hashes');
    }
    const orphaned = await this.repository.rewind(settings.chainId, ancestor);
    this.logger.warn(
      { ancestor: String(ancestor), droppedFrom: String(ancestor + 1n), orphanedDeposits: orphaned.length },
      'chain reorganisation: rescanning',
    );
  }
}
