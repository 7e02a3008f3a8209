import { Controller, Get, Inject, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { DEFAULT_RETRY_AFTER_SECONDS } from './exception-filters';
import { withTimeout } from './redis';
import { PLATFORM_OPTIONS, REDIS, type PlatformOptions } from './tokens';

export interface DependencyCheck {
  status: 'up' | 'down';
  latencyMs: number;
  error?: string;
}

async function check(run: () => Promise<unknown>, what: string): Promise<DependencyCheck> {
  const started = performance.now();
  try {
    await withTimeout(run(), 1500, what);
    return { status: 'up', latencyMs: Math.round(performance.now() - started) };
  } catch (err) {
    return {
      status: 'down',
      latencyMs: Math.round(performance.now() - started),
      error: (err as Error).message,
    };
  }
}

/**
 * Anonymous liveness and readiness: 200 when Postgres and Redis answer, 503 when either does not. The 503 carries
 * `Retry-After: 1` like every other 503 of ours (decisions 0479, 0488), so a client or a load balancer that honours
 * it looks again soon.
 */
@ApiExcludeController()
@Controller()
export class HealthController {
  constructor(
    private readonly dataSource: DataSource,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(PLATFORM_OPTIONS) private readonly options: PlatformOptions,
  ) {}

  @Get('health')
  async health(@Res() reply: FastifyReply): Promise<void> {
    const [postgres, redis] = await Promise.all([
      check(() => this.dataSource.query('SELECT 1'), 'postgres'),
      check(() => this.redis.ping(), 'redis'),
    ]);
    const up = postgres.status === 'up' && redis.status === 'up';
    if (!up) reply.header('retry-after', String(DEFAULT_RETRY_AFTER_SECONDS));
    reply
      .status(up ? 200 : 503)
      .header('cache-control', 'no-store')
      .send({ status: up ? 'ok' : 'error', service: this.options.service, checks: { postgres, redis } });
  }
}
