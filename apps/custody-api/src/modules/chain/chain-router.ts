import type { EntityManager } from 'typeorm';
import type { ChainAdapter } from './chain-adapter';
import type { EvmChainAdapter } from './evm/evm-chain.adapter';
import type { EvmRpc } from './evm/evm-rpc';
import type { EvmRepository } from './evm/evm.repository';
import { type EvmSettings, isEvmTransaction } from './evm/evm-settings';

/**
 * Picks the chain of a transaction: `evm` for live keys' ETH and USDT when CHAIN_EVM_RPC_URL is set, the
 * simulator for everything else (sandbox keys always, BTC and XRP, and every key when no node is configured).
 */
export class ChainRouter {
  constructor(
    readonly sim: ChainAdapter,
    readonly evm?: { settings: EvmSettings; rpc: EvmRpc; adapter: EvmChainAdapter },
    private readonly evmRecord?: EvmRepository,
  ) {}

  for(t: { environment: string; assetNetwork: string }): ChainAdapter {
    return this.evm && isEvmTransaction(this.evm.settings, t) ? this.evm.adapter : this.sim;
  }

  /**
   * Whether a signed send of `t` may be on the chain without being recorded (ChainAdapter.sendMayBeOnChain),
   * asked of its own chain. A process without EVM settings (an API role configured apart from its worker) still
   * reads the EVM send intents: a worker with them may have sent `t` to a node, and a cancel of a send that may
   * be on the chain would release money that has left (decisions 0440, 0453).
   */
  sendMayBeOnChain(manager: EntityManager, t: { id: string; environment: string; assetNetwork: string }) {
    if (!this.evm && this.evmRecord)
      return this.evmRecord.sendIntent(manager, t.id).then((intent) => intent !== undefined);
    return this.for(t).sendMayBeOnChain(manager, t.id);
  }
}
