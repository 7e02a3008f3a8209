import { Module } from '@nestjs/common';
import { APP_CONFIG } from '@tessera/platform';
import type { Env } from '../../config/env';
import { CHAIN_ADAPTER, type ChainAdapter, SimChainAdapter } from './chain-adapter';
import { ChainRouter } from './chain-router';
import { EvmBootCheck } from './evm/evm-boot-check';
import { EvmChainAdapter } from './evm/evm-chain.adapter';
import { EvmRpc } from './evm/evm-rpc';
import { EvmRepository } from './evm/evm.repository';
import { evmSettingsFromEnv } from './evm/evm-settings';

/** The simulator: the machine's pacing for every transaction, and the chain of those not on `evm`. */
export function chainFromEnv(env: Env): ChainAdapter {
  return new SimChainAdapter({
    stepDelayMs: env.CHAIN_SIM_STEP_DELAY_MS,
    blockMs: env.CHAIN_SIM_BLOCK_MS,
    failDestinations: env.CHAIN_SIM_FAIL_DESTINATIONS,
  });
}

@Module({
  providers: [
    {
      provide: CHAIN_ADAPTER,
      inject: [APP_CONFIG],
      useFactory: chainFromEnv,
    },
    EvmRepository,
    EvmBootCheck,
    {
      provide: ChainRouter,
      inject: [APP_CONFIG, CHAIN_ADAPTER, EvmRepository],
      useFactory: (env: Env, sim: ChainAdapter, repository: EvmRepository) => {
        const settings = evmSettingsFromEnv(env);
        if (!settings) return new ChainRouter(sim, undefined, repository);
        const rpc = new EvmRpc(settings.rpcUrl);
        const adapter = new EvmChainAdapter(settings, rpc, repository, {
          stepDelayMs: env.CHAIN_SIM_STEP_DELAY_MS,
        });
        return new ChainRouter(sim, { settings, rpc, adapter });
      },
    },
  ],
  exports: [CHAIN_ADAPTER, ChainRouter, EvmRepository],
})
export class ChainModule {}
