import { Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { encodeFunctionData, keccak256 } from 'viem';
import { formatAmount } from '../../../common/amounts';
import type { BalanceDelta } from '../../ledger/ledger';
import type { BroadcastRequest, BroadcastResult, ChainAdapter } from '../chain-adapter';
import { EvmKeys, gasStationPath } from './evm-keys';
import { ERC20_TRANSFER_ABI, type EvmRpc, NodeRejectedError } from './evm-rpc';
import type { EvmRepository, GasTopUpIntent, SendIntent, StationTransaction } from './evm.repository';
import type { EvmSettings } from './evm-settings';
import { answersFalse, TOKEN_REFUSED } from './evm-token';

/** Gas of a plain ETH transfer to an externally owned account. */
const NATIVE_TRANSFER_GAS = 21_000n;

/** How long a match of the node's genesis block with the recorded one is trusted before a send asks again. */
const CHAIN_VERIFIED_FOR_MS = 5_000;

/** Gas stations whose unrecorded top-ups one watcher round settles; the rest wait for the next rounds. */
const STATIONS_SETTLED_PER_ROUND = 100;

/** A withdrawal that cannot be sent yet (the gas top-up is not mined): the job is retried later. */
export class RetryLaterError extends Error {}

/**
 * The failure of a withdrawal whose sending address holds less on chain than it must send (the amount, and
 * for ETH the maximum network fee): the wallet's balance came, at least in part, by internal transfer.
 */
export function notOnAddress(t: BroadcastRequest['record'], onAddress: bigint, maxFee?: bigint): string {
  const units = (v: bigint) => `${formatAmount(v, t.assetDecimals)} ${t.assetSymbol}`;
  const needed =
    maxFee === undefined
      ? units(BigInt(t.amount))
      : `${units(BigInt(t.amount))} plus up to ${units(maxFee)} of network fee`;
  return (
    `The wallet's deposit address holds ${units(onAddress)} on chain, less than the ${needed} to send: ` +
    'a balance received by internal transfer stays on the address of the wallet that sent it'
  );
}

/**
 * The `evm` chain: withdrawals signed with the sending deposit address's HD key and broadcast over JSON-RPC.
 * Deposits, receipts and confirmations are the watcher's (EvmWatcher), so `watchesConfirmations` is true.
 *
 * A withdrawal is sent from its wallet's first deposit address. ETH: the EIP-1559 maximum fee
 * (gas × maxFeePerGas) is held on the wallet beside the amount; the receipt's real fee is posted at the end.
 * USDT: the fee is paid in ETH by the tenant's gas station, which tops the deposit address up with just the
 * gas it needs (docs/decisions/0212).
 */
export class EvmChainAdapter implements ChainAdapter {
  readonly name = 'evm';
  readonly watchesConfirmations = true;
  private readonly logger = new Logger('EvmChainAdapter');
  private readonly keys: EvmKeys;
  /** When this process last saw the node's genesis block match the recorded one (decision 0467). */
  private chainVerifiedAt = 0;

  constructor(
    private readonly settings: EvmSettings,
    private readonly rpc: EvmRpc,
    private readonly repository: EvmRepository,
    private readonly pacing: { stepDelayMs: number },
  ) {
    this.keys = new EvmKeys(settings.masterKey);
  }

  stepDelayMs(): number {
    return this.pacing.stepDelayMs;
  }

  /** Never used for scheduling: the watcher moves Confirming transactions. */
  confirmationDelayMs(): number {
    return this.settings.pollMs;
  }

  /** An intent left in evm_send_intents: a signed send committed before it was sent and not recorded since. */
  async sendMayBeOnChain(manager: EntityManager, transactionId: string): Promise<boolean> {
    return (await this.repository.sendIntent(manager, transactionId)) !== undefined;
  }

  /**
   * Throws (the step is retried) while the node's genesis block is not the one this database recorded for the
   * chain: nothing is signed for another chain (decision 0467). Checked at most every CHAIN_VERIFIED_FOR_MS.
   */
  private async assertSameChain(manager: EntityManager): Promise<void> {
    if (Date.now() - this.chainVerifiedAt < CHAIN_VERIFIED_FOR_MS) return;
    // Read on the step's own connection: a second one from the pool, asked for while every connection holds a
    // step's transaction, would wait for ever (the pool exhaustion of decision 0439).
    const [genesis, recorded] = await Promise.all([
      this.rpc.blockHash(0n),
      this.repository.recordedGenesis(this.settings.chainId, manager),
    ]);
    if (recorded !== undefined && genesis !== recorded) {
      throw new Error(
        `The node's genesis block is ${genesis}, not chain ${this.settings.chainId}'s (${recorded}): not sending`,
      );
    }
    this.chainVerifiedAt = Date.now();
  }

  async broadcast({ record: t, manager }: BroadcastRequest): Promise<BroadcastResult> {
    await this.assertSameChain(manager);
    const sender = await this.repository.sender(manager, t.walletId);
    if (!sender) return { ok: false, reason: 'The source wallet has no address to send from' };
    const isToken = t.assetSymbol !== 'ETH';
    if (isToken && !this.settings.usdtContract) {
      return { ok: false, reason: `No ${t.assetSymbol} contract is configured for this chain` };
    }
    // An earlier attempt committed its signed transaction and may have sent it without recording the send:
    // settle that one first, before anything (a gas estimate, a new signature) that its success would change.
    const prior = await this.repository.sendIntent(manager, t.id);
    if (prior) {
      const recovered = await this.recover(t, manager, sender, prior, isToken);
      if (recovered) return recovered;
    }
    const amount = BigInt(t.amount);
    // The ledger may hold more than the address: a balance received by internal transfer stays on the sending
    // wallet's address (decision 0444). Said plainly here rather than as the node's refusal of the estimate.
    const onAddress = isToken
      ? await this.rpc.tokenBalance(this.settings.usdtContract!, sender.address)
      : await this.rpc.pendingBalance(sender.address);
    if (onAddress < amount) return { ok: false, reason: notOnAddress(t, onAddress) };
    const call = isToken
      ? {
          from: sender.address,
          to: this.settings.usdtContract!,
          value: 0n,
          data: encodeFunctionData({
            abi: ERC20_TRANSFER_ABI,
            functionName: 'transfer',
            args: [t.destinationAddress as `0x${string}`, amount],
          }),
        }
      : { from: sender.address, to: t.destinationAddress, value: amount, data: undefined };

    let gasLimit: bigint;
    try {
      // 20 % headroom over the estimate, except for a plain transfer to an account (exactly 21,000); a
      // destination contract that needs more gas to receive ETH gets its estimate too.
      // A token's answer is simulated beside the estimate (one batched request): a token that would answer
      // `false` without reverting is refused here rather than sent to move nothing (decision 0466).
      const [estimate, answer] = await Promise.all([
        this.rpc.estimateGas(call),
        isToken ? this.rpc.simulate(call) : undefined,
      ]);
      if (answersFalse(answer)) return { ok: false, reason: TOKEN_REFUSED };
      gasLimit = !isToken && estimate === NATIVE_TRANSFER_GAS ? estimate : (estimate * 12n) / 10n;
    } catch (err) {
      if (err instanceof NodeRejectedError) {
        return { ok: false, reason: `The transfer would revert on-chain: ${err.message}` };
      }
      throw err;
    }
    const fees = await this.rpc.fees();
    const maxFee = gasLimit * fees.maxFeePerGas;

    const deltas: BalanceDelta[] = [];
    let toppedUp = false;
    if (!isToken) {
      const available = await this.repository.lockAvailable(manager, t.walletId);
      if (available < maxFee) {
        return { ok: false, reason: `Insufficient balance for the network fee (up to ${maxFee} wei)` };
      }
      if (onAddress < amount + maxFee) return { ok: false, reason: notOnAddress(t, onAddress, maxFee) };
      deltas.push({
        walletId: t.walletId,
        transactionId: t.id,
        kind: 'fee-hold',
        available: -maxFee,
        locked: maxFee,
      });
    } else {
      const funded = await this.fundGas(sender.tenantId, sender.environment, sender.address, maxFee);
      if (funded === 'unfunded') {
        return { ok: false, reason: "The tenant's gas station cannot pay the network fee" };
      }
      toppedUp = funded === 'topped-up';
    }

    const nonce = await this.repository.lockNonce(manager, this.settings.chainId, sender.address, () =>
      this.rpc.pendingNonce(sender.address),
    );
    const account = this.keys.account(sender.tenantId, sender.seedSealed, sender.derivationPath);
    const serialized = await account.signTransaction({
      chainId: this.settings.chainId,
      type: 'eip1559',
      nonce,
      to: call.to as `0x${string}`,
      value: call.value,
      data: call.data,
      gas: gasLimit,
      maxFeePerGas: fees.maxFeePerGas,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    });
    const txHash = keccak256(serialized);
    const intent: SendIntent = {
      transactionId: t.id,
      chainId: this.settings.chainId,
      fromAddress: sender.address,
      nonce,
      txHash,
      rawTx: serialized,
      gasLimit: String(gasLimit),
      maxFeePerGas: String(fees.maxFeePerGas),
      maxPriorityFeePerGas: String(fees.maxPriorityFeePerGas),
    };
    // Committed before the send: if the node takes it and this transaction then rolls back (a lost answer, a
    // crash, a dropped connection), the next attempt finds it instead of signing a second version.
    await this.repository.recordSendIntent(intent);
    try {
      await this.rpc.sendRaw(serialized);
    } catch (err) {
      if (err instanceof NodeRejectedError) {
        // The node refused this transaction, so it was never sent: the nonce stays free for the next send.
        await this.repository.dropSendIntent(t.id);
        if (toppedUp && /insufficient funds/i.test(err.message)) throw new RetryLaterError(err.message);
        return { ok: false, reason: `Rejected by the network: ${err.message}` };
      }
      throw err;
    }
    return this.recordSend(t, manager, intent, isToken ? null : maxFee, deltas, nonce);
  }

  /**
   * An earlier attempt's transaction (decision 0440). The node has it (pending or mined), or takes the same bytes
   * again: it is this withdrawal's send, recorded as if this attempt had made it. The node neither has nor takes
   * it (its nonce went to another transaction, or it can no longer pay): it was never mined through this node,
   * so the intent is dropped and the withdrawal signs afresh (undefined).
   */
  private async recover(
    t: BroadcastRequest['record'],
    manager: EntityManager,
    sender: { address: string },
    prior: SendIntent,
    isToken: boolean,
  ): Promise<BroadcastResult | undefined> {
    if (!(await this.rpc.holdsOrTakes(prior.txHash, prior.rawTx))) {
      this.logger.warn(
        { transactionId: t.id, txHash: prior.txHash, nonce: prior.nonce, from: sender.address },
        'an unrecorded earlier send is not on the chain; signing afresh',
      );
      await this.repository.dropSendIntent(t.id);
      return undefined;
    }
    this.logger.warn(
      { transactionId: t.id, txHash: prior.txHash, nonce: prior.nonce, from: sender.address },
      'recording an earlier send the node had accepted',
    );
    let feeHeld: bigint | null = null;
    const deltas: BalanceDelta[] = [];
    if (!isToken) {
      // The fee is held as the first attempt held it; the transaction is out whatever the balance says now,
      // so at most what is available (the receipt posts the real fee).
      const maxFee = BigInt(prior.gasLimit) * BigInt(prior.maxFeePerGas);
      const available = await this.repository.lockAvailable(manager, t.walletId);
      feeHeld = available < maxFee ? available : maxFee;
      deltas.push({
        walletId: t.walletId,
        transactionId: t.id,
        kind: 'fee-hold',
        available: -feeHeld,
        locked: feeHeld,
      });
    }
    return this.recordSend(t, manager, prior, feeHeld, deltas);
  }

  /** The send, recorded in the broadcast's transaction: the nonce, evm_transfers, and the intent dropped. */
  private async recordSend(
    t: BroadcastRequest['record'],
    manager: EntityManager,
    sent: SendIntent,
    feeHeld: bigint | null,
    deltas: BalanceDelta[],
    /** The sender's next nonce when this transaction already holds its row (a fresh send locked it to sign). */
    lockedNext?: number,
  ): Promise<BroadcastResult> {
    const next =
      lockedNext ??
      (await this.repository.lockNonce(manager, this.settings.chainId, sent.fromAddress, () =>
        this.rpc.pendingNonce(sent.fromAddress),
      ));
    if (next <= sent.nonce) {
      await this.repository.setNextNonce(manager, this.settings.chainId, sent.fromAddress, sent.nonce + 1);
    }
    await this.repository.insertOutbound(manager, {
      transactionId: t.id,
      chainId: this.settings.chainId,
      txHash: sent.txHash,
      fromAddress: sent.fromAddress,
      toAddress: t.destinationAddress,
      nonce: sent.nonce,
      gasLimit: BigInt(sent.gasLimit),
      maxFeePerGas: BigInt(sent.maxFeePerGas),
      maxPriorityFeePerGas: BigInt(sent.maxPriorityFeePerGas),
      feeHeld,
      feeWalletId: feeHeld === null ? null : t.walletId,
    });
    await this.repository.dropSendIntent(t.id, manager);
    this.logger.log(
      { transactionId: t.id, txHash: sent.txHash, nonce: sent.nonce, from: sent.fromAddress },
      'withdrawal broadcast',
    );
    const networkFee = BigInt(sent.gasLimit) * BigInt(sent.maxFeePerGas);
    return { ok: true, txHash: sent.txHash, networkFee: String(networkFee), feeCurrency: 'ETH', deltas };
  }

  /**
   * Gives `address` the ETH for `needed` wei of gas from the tenant's gas station (also before a fee bump), apart
   * from the withdrawal's database transaction, on a pool of its own (the top-up is on-chain whatever happens to
   * the withdrawal, and its caller may hold a connection of the main pool: decision 0439). Write-ahead (decision
   * 0451): under the station's lock, earlier top-ups left unrecorded are settled first, the signed top-up is
   * committed before it is sent, and the send is recorded (the station's nonce moved past it) after.
   */
  async fundGas(
    tenantId: string,
    environment: string,
    address: string,
    needed: bigint,
  ): Promise<'enough' | 'topped-up' | 'unfunded'> {
    const balance = await this.rpc.pendingBalance(address);
    if (balance >= needed) return 'enough';
    const { chainId } = this.settings;
    const seed = await this.repository.sideTransaction((manager) =>
      this.repository.tenantSeed(manager, tenantId),
    );
    if (!seed) return 'unfunded';
    const station = this.keys.account(tenantId, seed, gasStationPath(environment));
    const funded = await this.repository.withGasStation(chainId, station.address, async (transaction) => {
      await this.settleTopUps(transaction, station.address);
      // The node's count wins when the stored nonce is behind it (a top-up it took was never recorded, say before
      // intents were kept): a nonce the chain has used is never signed again.
      const onNode = await this.rpc.pendingNonce(station.address);
      const stored = await transaction((manager) =>
        this.repository.lockNonce(manager, chainId, station.address, async () => onNode),
      );
      const nonce = Math.max(stored, onNode);
      const fees = await this.rpc.fees();
      const value = needed - balance;
      const serialized = await station.signTransaction({
        chainId,
        type: 'eip1559',
        nonce,
        to: address as `0x${string}`,
        value,
        gas: NATIVE_TRANSFER_GAS,
        maxFeePerGas: fees.maxFeePerGas,
        maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
      });
      const intent: GasTopUpIntent = {
        chainId,
        stationAddress: station.address,
        nonce,
        txHash: keccak256(serialized),
        rawTx: serialized,
        toAddress: address,
        value: String(value),
      };
      // Committed before the send: if the node takes it and the recording below never commits (a lost answer, a
      // crash), the next top-up finds it instead of signing another transaction under its nonce.
      await transaction((manager) => this.repository.recordGasTopUpIntent(manager, intent));
      try {
        await this.rpc.sendRaw(serialized);
      } catch (err) {
        if (err instanceof NodeRejectedError) {
          // Refused, so never sent: the nonce stays free.
          await transaction((manager) => this.repository.dropGasTopUpIntent(manager, intent));
          this.logger.warn({ station: station.address, reason: err.message }, 'gas station refused');
          return 'unfunded' as const;
        }
        throw err;
      }
      await transaction((manager) => this.repository.recordGasTopUp(manager, intent));
      this.logger.log({ to: address, hash: intent.txHash, nonce, wei: String(value) }, 'gas top-up sent');
      return 'topped-up' as const;
    });
    return funded!;
  }

  /**
   * Settles the top-ups of every station of the chain left committed but unrecorded (a crash, a lost answer), on
   * each watcher round, so the first round after a restart finds them without waiting for the next top-up. A
   * station whose top-up is running is skipped: that top-up settles them first. At most STATIONS_SETTLED_PER_ROUND
   * stations a round (each is a lock and a node lookup per intent), so a round stays short.
   */
  async settleGasTopUps(): Promise<void> {
    const { chainId } = this.settings;
    for (const station of await this.repository.gasStationsWithTopUpIntents(
      chainId,
      STATIONS_SETTLED_PER_ROUND,
    )) {
      await this.repository.withGasStation(
        chainId,
        station,
        (transaction) => this.settleTopUps(transaction, station),
        { ifFree: true },
      );
    }
  }

  /**
   * The station's top-ups committed before they were sent and not recorded since, under its lock (decision 0451).
   * The node has one (pending or mined): it was sent, and is recorded as a top-up is (the station's nonce moved past
   * it). The node does not have it: it never left (or left no trace a later top-up could collide with), and its
   * intent is dropped without sending it (decision 0454): a top-up is not owed to anyone, its withdrawal may have
   * failed since, and one still waiting for gas tops up afresh under the same nonce.
   */
  private async settleTopUps(transaction: StationTransaction, station: string): Promise<void> {
    const { chainId } = this.settings;
    const intents = await transaction((manager) =>
      this.repository.gasTopUpIntents(manager, chainId, station),
    );
    for (const intent of intents) {
      const known = await this.rpc.knows(intent.txHash);
      const log = { station, to: intent.toAddress, txHash: intent.txHash, nonce: intent.nonce };
      if (known) {
        this.logger.warn(log, 'recording an earlier gas top-up the node had accepted');
        await transaction((manager) => this.repository.recordGasTopUp(manager, intent));
      } else {
        this.logger.warn(log, 'an unrecorded gas top-up is not on the node; dropped, not sent');
        await transaction((manager) => this.repository.dropGasTopUpIntent(manager, intent));
      }
    }
  }
}
