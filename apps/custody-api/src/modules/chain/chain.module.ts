import { Module } from '@nestjs/common';
import { APP_CONFIG } from '@tessera/platform';
import type { Env } from '../../config/env';
import { CHAIN_ADAPTER, SimChainAdapter } from './chain-adapter';

@Module({
  providers: [
    {
      provide: CHAIN_ADAPTER,
      inject: [APP_CONFIG],
      useFactory: (env: Env) =>
        new SimChainAdapter({
          stepDelayMs: env.CHAIN_SIM_STEP_DELAY_MS,
          blockMs: env.CHAIN_SIM_BLOCK_MS,
          failDestinations: env.CHAIN_SIM_FAIL_DESTINATIONS,
        }),
    },
  ],
  exports: [CHAIN_ADAPTER],
})
export class ChainModule {}
