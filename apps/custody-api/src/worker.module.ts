import { type DynamicModule, Module } from '@nestjs/common';
import {
  OutboxRelayModule,
  PlatformModule,
  type PlatformOptions,
  QUICK_STALL_RECOVERY,
} from '@tessera/platform';
import type { Env } from './config/env';
import { entities, SCHEMA } from './database/database';
import { QUEUES } from '@tessera/contracts';
import { migrations } from './database/migrations';
import { chainFromEnv } from './modules/chain/chain.module';
import { ReconciliationSchedulingModule } from './modules/reconciliation/reconciliation.module';
import { startMachineOnCreated } from './modules/transactions/machine-start';
import { TransactionsProcessingModule } from './modules/transactions/transactions-processing.module';

/** The worker role's module: platform wiring plus the consumers (the transaction state machine). */
@Module({})
export class WorkerModule {
  static forRoot(env: Env, overrides: Partial<PlatformOptions> = {}): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        PlatformModule.forRoot({
          service: 'custody-worker',
          env,
          config: env,
          errorShape: 'custody',
          database: { schema: SCHEMA, entities, migrations },
          consumes: [QUEUES.CUSTODY_TRANSACTIONS],
          workerConcurrency: env.CUSTODY_WORKER_CONCURRENCY,
          // A step held by a worker that died resumes within about 25 s: the state machine's steps are
          // idempotent, and none blocks the event loop for anything near 15 s.
          ...QUICK_STALL_RECOVERY,
          ...overrides,
        }),
        TransactionsProcessingModule,
        ReconciliationSchedulingModule,
        // Relays committed outbox rows to webhook.events and starts each new transaction's machine
        // (OUTBOX_RELAY_ENABLED=false leaves it idle: keep it on in at least one worker).
        OutboxRelayModule.forRoot({
          source: 'custody',
          enabled: env.OUTBOX_RELAY_ENABLED,
          followUps: startMachineOnCreated(chainFromEnv(env)),
        }),
      ],
    };
  }
}
