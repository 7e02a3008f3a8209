import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, ConfigError, PLATFORM_OPTIONS, type PlatformOptions } from '@tessera/platform';
import type { Env } from '../../../config/env';
import { EvmRepository } from './evm.repository';

/**
 * At boot, a custody process without CHAIN_EVM_RPC_URL looks at what the database holds of the EVM chain
 * (decision 0462):
 * - a production worker (NODE_ENV=production) refuses to start once a worker has worked a node in this database
 *   (a scan cursor or an EVM transfer): without the node it would run live keys' ETH and USDT on the simulator,
 *   completing withdrawals that were never sent and missing every deposit;
 * - otherwise, with live keys' ETH or USDT wallets present (or chain records, in development: `pnpm start`
 *   without `--chain evm` after a run with it), the API and the worker each say once, at warn, what the
 *   missing setting costs in that role (the CLI logs errors only).
 * With CHAIN_EVM_RPC_URL set, or with no live EVM wallet and no chain record (development, the suites), it
 * reads nothing more and says nothing. Runs before any consumer, relay or watcher starts (onApplicationBootstrap).
 */
@Injectable()
export class EvmBootCheck implements OnModuleInit {
  private readonly logger = new Logger('EvmBootCheck');

  constructor(
    @Inject(APP_CONFIG) private readonly env: Env,
    @Inject(PLATFORM_OPTIONS) private readonly platform: PlatformOptions,
    private readonly repository: EvmRepository,
  ) {}

  async onModuleInit(): Promise<void> {
    if (this.env.CHAIN_EVM_RPC_URL) return;
    const { liveWallets, chainRecords } = await this.repository.footprint();
    const worker = this.platform.service === 'custody-worker';
    if (worker && chainRecords && this.env.NODE_ENV === 'production')
      throw new ConfigError([
        'CHAIN_EVM_RPC_URL: not set, but this database holds EVM chain records (a scan cursor or EVM transfers): ' +
          "without the node this worker would run live keys' ETH and USDT on the simulator, completing withdrawals " +
          'that were never sent and missing deposits. Give it the same CHAIN_EVM_* settings as before ' +
          '(docs/deploy.md, decision 0462)',
      ]);
    if (liveWallets === 0 && !chainRecords) return;
    const consequence = worker
      ? "live keys' ETH and USDT run on the simulator: deposits on the chain are not credited and withdrawals complete without being sent"
      : "a cancel reads evm_send_intents for every withdrawal (decision 0453) and reconciliations run here leave live ETH/USDT wallets' on-chain balances unread (partial)";
    this.logger.warn(
      {
        setting: 'CHAIN_EVM_RPC_URL',
        role: this.platform.service,
        liveEvmWallets: liveWallets,
        chainRecords,
      },
      `CHAIN_EVM_RPC_URL is not set, but the EVM chain is in use here (live ETH/USDT wallets): ${consequence}. Give every custody ` +
        'process the same CHAIN_EVM_* settings (docs/deploy.md)',
    );
  }
}
