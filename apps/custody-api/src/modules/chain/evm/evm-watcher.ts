import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { ChainRouter } from '../chain-router';
import { EvmChainIdentity } from './evm-chain-identity';
import { EvmConfirmations } from './evm-confirmations';
import { EvmDepositScanner } from './evm-deposit-scanner';
import { EvmRepository } from './evm.repository';

/** Scan steps per round before confirmations are looked at (a long catch-up still updates confirmations). */
const MAX_STEPS_PER_ROUND = 20;

/**
 * The worker's EVM chain watcher: every CHAIN_EVM_POLL_MS it scans new blocks for deposits, fails deposits
 * a reorg took away, then follows confirmations and receipts. One replica at a time does it: a round runs
 * under a Postgres advisory lock (released with its session's transaction, also if the process dies). It
 * starts only when CHAIN_EVM_RPC_URL is set; the first round checks that the node's chain id is the
 * configured one, and every round that its genesis block is the one this database recorded (decision 0467).
 */
@Injectable()
export class EvmWatcher implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(EvmWatcher.name);
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;
  private chainChecked = false;

  constructor(
    private readonly chains: ChainRouter,
    private readonly repository: EvmRepository,
    private readonly scanner: EvmDepositScanner,
    private readonly confirmations: EvmConfirmations,
    private readonly identity: EvmChainIdentity,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.chains.evm) return;
    this.schedule(0);
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.round()
        .catch((err: Error) => this.logger.warn({ err: err.message }, 'chain watcher round failed'))
        .finally(() => this.schedule(this.chains.evm!.settings.pollMs));
    }, delayMs);
  }

  /** One round; exposed for the bench and tests that drive the watcher by hand. */
  async round(): Promise<void> {
    const { settings, rpc } = this.chains.evm!;
    if (!this.chainChecked) {
      const chainId = await rpc.chainId();
      if (chainId !== settings.chainId) {
        throw new Error(`The node reports chain id ${chainId}, CHAIN_EVM_CHAIN_ID is ${settings.chainId}`);
      }
      this.chainChecked = true;
    }
    await this.repository.withLeadership(async () => {
      await this.identity.check();
      let caughtUp = false;
      for (let i = 0; i < MAX_STEPS_PER_ROUND && !caughtUp && !this.stopped; i++) {
        caughtUp = await this.scanner.step();
      }
      if (caughtUp) await this.confirmations.failOrphans();
      if (!this.stopped) await this.confirmations.track();
      // Gas top-ups a crash or a lost answer left committed but unrecorded (decision 0451).
      if (!this.stopped) await this.chains.evm!.adapter.settleGasTopUps();
    });
  }
}
