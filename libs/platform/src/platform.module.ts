import {
  type DynamicModule,
  Global,
  Inject,
  Injectable,
  Module,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { APP_FILTER, DiscoveryModule } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import type Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { CustodyExceptionFilter, VerificationExceptionFilter } from './exception-filters';
import { HealthController } from './health.controller';
import { pingController } from './ping.controller';
import { JobQueues, JobWorkers } from './jobs';
import { createLogger, loggingModule } from './logging';
import { MetricsController, MetricsService } from './metrics';
import { paceOutboxWakes } from './outbox-wake';
import { closeConnection, createRedis, RedisKeys } from './redis';
import { RpcClient } from './rpc';
import { serviceDataSourceOptions } from './database';
import {
  APP_CONFIG,
  PLATFORM_OPTIONS,
  REDIS,
  REQUEST_REDIS,
  ROOT_LOGGER,
  type PlatformOptions,
} from './tokens';

class RedisLifecycle implements OnApplicationShutdown {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(REQUEST_REDIS) private readonly requestRedis: Redis,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([this.redis, this.requestRedis].map(closeConnection));
  }
}

/** The service's outbox wakes are paced like the relay's passes (decision 0419). */
@Injectable()
class OutboxWakePacing {
  constructor(dataSource: DataSource, @Inject(PLATFORM_OPTIONS) options: PlatformOptions) {
    paceOutboxWakes(dataSource, options.env.OUTBOX_RELAY_MIN_INTERVAL_MS);
  }
}

/**
 * Everything a Tessera service needs before its first feature: config, logs, the error shape,
 * its schema's DataSource, Redis, queues and workers, RPC, /health and /metrics.
 */
@Global()
@Module({})
export class PlatformModule {
  static forRoot(options: PlatformOptions & { config?: unknown }): DynamicModule {
    const { env } = options;
    const logger = createLogger({
      service: options.service,
      level: env.LOG_LEVEL,
      destination: options.logDestination as never,
    });
    return {
      module: PlatformModule,
      imports: [
        DiscoveryModule,
        loggingModule(logger),
        TypeOrmModule.forRoot({
          ...serviceDataSourceOptions({
            url: env.DATABASE_URL,
            schema: options.database.schema,
            entities: options.database.entities,
            migrations: options.database.migrations,
            settings: options.database.settings,
            poolSize: env.DB_POOL_SIZE,
            applicationName: options.service,
          }),
          retryAttempts: 3,
          retryDelay: 1000,
        }),
      ],
      controllers: [HealthController, MetricsController, pingController(options.service)],
      providers: [
        { provide: PLATFORM_OPTIONS, useValue: options },
        { provide: ROOT_LOGGER, useValue: logger },
        { provide: APP_CONFIG, useValue: options.config ?? env },
        { provide: REDIS, useFactory: () => createRedis(env.REDIS_URL, { connectionName: options.service }) },
        {
          provide: REQUEST_REDIS,
          useFactory: () =>
            createRedis(env.REDIS_URL, {
              connectionName: `${options.service}-requests`,
              enableAutoPipelining: true,
              commandTimeout: env.REDIS_COMMAND_TIMEOUT_MS,
            }),
        },
        { provide: RedisKeys, useValue: new RedisKeys(env.QUEUE_PREFIX) },
        { provide: RpcClient, useFactory: () => new RpcClient(env.REDIS_URL, env.QUEUE_PREFIX) },
        {
          provide: APP_FILTER,
          useClass: options.errorShape === 'custody' ? CustodyExceptionFilter : VerificationExceptionFilter,
        },
        RedisLifecycle,
        OutboxWakePacing,
        MetricsService,
        JobQueues,
        JobWorkers,
      ],
      exports: [
        ROOT_LOGGER,
        PLATFORM_OPTIONS,
        APP_CONFIG,
        REDIS,
        REQUEST_REDIS,
        RedisKeys,
        RpcClient,
        MetricsService,
        JobQueues,
      ],
    };
  }
}
