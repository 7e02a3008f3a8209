import { Module } from '@nestjs/common';
import { APP_CONFIG } from '@tessera/platform';
import type { Env } from '../../config/env';
import { CHAIN_ADAPTER, type ChainAdapter, SimChainAdapter } from './chain-adapter';

/** The chain the configuration selects (the simulator is the only adapter so far). */
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
  ],
  exports: [CHAIN_ADAPTER],
})
export class ChainModule {}
