import {
  type Block,
  createPublicClient,
  decodeEventLog,
  type Hash,
  type Hex,
  http,
  parseAbiItem,
  type PublicClient,
  type TransactionReceipt,
} from 'viem';

export const TRANSFER_EVENT = parseAbiItem(
  'event Transfer(address indexed from, address indexed to, uint256 value)',
);

export const ERC20_TRANSFER_ABI = [
  {
    type: 'function',
    name: 'transfer',
    stateMutability: 'nonpayable',
    inputs: [
      { name: 'to', type: 'address' },
      { name: 'value', type: 'uint256' },
    ],
    outputs: [{ name: '', type: 'bool' }],
  },
] as const;

const ERC20_BALANCE_ABI = [
  {
    type: 'function',
    name: 'balanceOf',
    stateMutability: 'view',
    inputs: [{ name: 'owner', type: 'address' }],
    outputs: [{ name: '', type: 'uint256' }],
  },
] as const;

export type FullBlock = Block<bigint, true, 'latest'>;

export interface TokenTransferLog {
  blockNumber: bigint;
  blockHash: string;
  txHash: string;
  logIndex: number;
  from: string;
  to: string;
  value: bigint;
}

/**
 * The RPC URL as it may be logged: scheme and host only. A hosted node's URL usually carries its API key in the
 * path (`/v3/<key>`) or the query, and viem puts the whole URL into every error message it raises, which the
 * watcher and the worker log.
 */
export function loggableRpcUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const hidden = parsed.pathname !== '/' || parsed.search !== '' || parsed.username !== '';
    return hidden ? `${parsed.protocol}//${parsed.host}/[REDACTED]` : `${parsed.protocol}//${parsed.host}`;
  } catch {
    return '[REDACTED]';
  }
}

/** `client` whose methods' errors never carry `url` (replaced by loggableRpcUrl) in their messages. */
function withoutSecretUrl(client: PublicClient, url: string): PublicClient {
  const safe = loggableRpcUrl(url);
  const variants = [...new Set([url, url.replace(/\/$/, ''), new URL(url).toString()])].filter(Boolean);
  const scrub = (err: unknown): unknown => {
    if (!(err instanceof Error)) return err;
    const record = err as unknown as Record<string, unknown>;
    for (const key of ['message', 'shortMessage', 'details', 'url']) {
      const value = record[key];
      if (typeof value !== 'string') continue;
      let clean = value;
      for (const v of variants) clean = clean.split(v).join(safe);
      if (clean !== value)
        Object.defineProperty(err, key, { value: clean, writable: true, configurable: true });
    }
    if (err.cause) scrub(err.cause);
    return err;
  };
  return new Proxy(client, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        try {
          const result = (value as (...a: unknown[]) => unknown).apply(target, args);
          return result instanceof Promise
            ? result.catch((err: unknown) => Promise.reject(scrub(err)))
            : result;
        } catch (err) {
          throw scrub(err);
        }
      };
    },
  });
}

/** A node's answer that refuses the request itself (as opposed to the node being unreachable). */
export class NodeRejectedError extends Error {}

/**
 * The only code that speaks JSON-RPC to the EVM node (viem, requests of one turn batched into one HTTP call).
 */
export class EvmRpc {
  readonly client: PublicClient;

  constructor(readonly url: string) {
    const client = createPublicClient({ transport: http(url, { batch: { wait: 0 }, retryCount: 1 }) });
    this.client = withoutSecretUrl(client, url);
  }

  chainId(): Promise<number> {
    return this.client.getChainId();
  }

  head(): Promise<bigint> {
    return this.client.getBlockNumber({ cacheTime: 0 });
  }

  /** Native balance (wei) of an address at a block (reconciliation reads every address at one block). */
  nativeBalance(address: string, blockNumber: bigint): Promise<bigint> {
    return this.client.getBalance({ address: address as `0x${string}`, blockNumber });
  }

  /** ERC-20 `balanceOf(address)` at a block (the latest one when none is given). */
  tokenBalance(contract: string, address: string, blockNumber?: bigint): Promise<bigint> {
    return this.client.readContract({
      address: contract as `0x${string}`,
      abi: ERC20_BALANCE_ABI,
      functionName: 'balanceOf',
      args: [address as `0x${string}`],
      blockNumber,
    });
  }

  /** Blocks `from..to` with their transactions, in order; undefined when one is missing (head moved back). */
  async blocks(from: bigint, to: bigint): Promise<FullBlock[] | undefined> {
    const numbers: bigint[] = [];
    for (let n = from; n <= to; n++) numbers.push(n);
    try {
      return (await Promise.all(
        numbers.map((blockNumber) => this.client.getBlock({ blockNumber, includeTransactions: true })),
      )) as FullBlock[];
    } catch (err) {
      if ((err as Error).name === 'BlockNotFoundError') return undefined;
      throw err;
    }
  }

  async blockHash(blockNumber: bigint): Promise<string | undefined> {
    try {
      return (await this.client.getBlock({ blockNumber })).hash ?? undefined;
    } catch (err) {
      if ((err as Error).name === 'BlockNotFoundError') return undefined;
      throw err;
    }
  }

  /** ERC-20 Transfer logs of `contract` in `from..to`. */
  async tokenTransfers(contract: string, from: bigint, to: bigint): Promise<TokenTransferLog[]> {
    const logs = await this.client.getLogs({
      address: contract as `0x${string}`,
      event: TRANSFER_EVENT,
      fromBlock: from,
      toBlock: to,
    });
    return logs
      .filter((l) => !l.removed && l.blockHash && l.transactionHash)
      .map((l) => {
        const { args } = decodeEventLog({ abi: [TRANSFER_EVENT], data: l.data, topics: l.topics });
        return {
          blockNumber: l.blockNumber!,
          blockHash: l.blockHash!,
          txHash: l.transactionHash!,
          logIndex: l.logIndex!,
          from: args.from,
          to: args.to,
          value: args.value,
        };
      });
  }

  async receipt(hash: string): Promise<TransactionReceipt | undefined> {
    try {
      return await this.client.getTransactionReceipt({ hash: hash as Hash });
    } catch (err) {
      if ((err as Error).name === 'TransactionReceiptNotFoundError') return undefined;
      throw err;
    }
  }

  /** Whether the node has the transaction, pending or mined. */
  async knows(hash: string): Promise<boolean> {
    try {
      await this.client.getTransaction({ hash: hash as Hash });
      return true;
    } catch (err) {
      if ((err as Error).name === 'TransactionNotFoundError') return false;
      throw err;
    }
  }

  /**
   * Whether a transaction signed earlier and maybe never sent (a send intent) is with the node: it has the hash
   * (pending or mined), or takes the same bytes again now. False: the node refuses it and does not have it (its
   * nonce went to another transaction, or the sender can no longer pay), so it never left through this node.
   */
  async holdsOrTakes(hash: string, raw: `0x${string}`): Promise<boolean> {
    if (await this.knows(hash)) return true;
    try {
      await this.sendRaw(raw);
      return true;
    } catch (err) {
      if (!(err instanceof NodeRejectedError)) throw err;
      return this.knows(hash);
    }
  }

  /** The account's next nonce counting its pending transactions. */
  pendingNonce(address: string): Promise<number> {
    return this.client.getTransactionCount({ address: address as `0x${string}`, blockTag: 'pending' });
  }

  pendingBalance(address: string): Promise<bigint> {
    return this.client.getBalance({ address: address as `0x${string}`, blockTag: 'pending' });
  }

  /** Gas of a call against the latest block; a revert is a NodeRejectedError with the node's reason. */
  async estimateGas(call: {
    from: string;
    to: string;
    value: bigint;
    data?: `0x${string}`;
  }): Promise<bigint> {
    try {
      return await this.client.estimateGas({
        account: call.from as `0x${string}`,
        to: call.to as `0x${string}`,
        value: call.value,
        data: call.data,
        blockTag: 'latest',
      });
    } catch (err) {
      if (isTransportError(err)) throw err;
      throw new NodeRejectedError(shortMessage(err));
    }
  }

  /** What `call` answers if run now (eth_call at the latest block): its return data, `0x` when it returns none. */
  async simulate(call: { from: string; to: string; value: bigint; data?: `0x${string}` }): Promise<Hex> {
    try {
      const { data } = await this.client.call({
        account: call.from as `0x${string}`,
        to: call.to as `0x${string}`,
        value: call.value,
        data: call.data,
        blockTag: 'latest',
      });
      return data ?? '0x';
    } catch (err) {
      if (isTransportError(err)) throw err;
      throw new NodeRejectedError(shortMessage(err));
    }
  }

  /** EIP-1559 fees: maxFeePerGas = 2 × base fee + priority fee (viem's estimate). */
  async fees(): Promise<{ maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }> {
    const { maxFeePerGas, maxPriorityFeePerGas } = await this.client.estimateFeesPerGas({
      chain: null,
      type: 'eip1559',
    });
    return { maxFeePerGas, maxPriorityFeePerGas };
  }

  /**
   * Sends a signed transaction. A refusal by the node (underpriced, insufficient funds, nonce) is a
   * NodeRejectedError; an unreachable node rethrows as is (the caller retries later).
   */
  async sendRaw(serialized: `0x${string}`): Promise<string> {
    try {
      return await this.client.sendRawTransaction({ serializedTransaction: serialized });
    } catch (err) {
      if (isTransportError(err)) throw err;
      throw new NodeRejectedError(shortMessage(err));
    }
  }
}

function isTransportError(err: unknown): boolean {
  const name = (err as Error).name;
  return name === 'HttpRequestError' || name === 'TimeoutError' || name === 'WebSocketRequestError';
}

function shortMessage(err: unknown): string {
  const e = err as { shortMessage?: string; details?: string; message?: string };
  return (e.details || e.shortMessage || e.message || 'rejected by the node').slice(0, 300);
}
