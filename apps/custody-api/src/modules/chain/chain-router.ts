import type { ChainAdapter } from './chain-adapter';
import type { EvmChainAdapter } from './evm/evm-chain.adapter';
import type { EvmRpc } from './evm/evm-rpc';
import { type EvmSettings, isEvmTransaction } from './evm/evm-settings';

/**
 * Picks the chain of a transaction: `evm` for live keys' ETH and USDT when CHAIN_EVM_RPC_URL is set, the
 * simulator for everything else (sandbox keys always, BTC and XRP, and every key when no node is configured).
 */
export class ChainRouter {
  constructor(
    readonly sim: ChainAdapter,
    readonly evm?: { settings: EvmSettings; rpc: EvmRpc; adapter: EvmChainAdapter },
  ) {}

  for(t: { environment: string; assetNetwork: string }): ChainAdapter {
    return this.evm && isEvmTransaction(this.evm.settings, t) ? this.evm.adapter : this.sim;
  }
}
