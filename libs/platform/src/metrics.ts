import { Controller, Get, Inject, Injectable, Req, Res } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { notFound, unauthorized } from './errors';
import { ROUTE_NOT_FOUND } from './exception-filters';
import { PLATFORM_OPTIONS, type PlatformOptions } from './tokens';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';

/** One Prometheus registry per app, so several apps in one test process do not collide. */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();
  readonly httpDuration: Histogram<'method' | 'route' | 'status_code'>;

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    this.httpDuration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency by route and status',
      labelNames: ['method', 'route', 'status_code'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [this.registry],
    });
  }

  /** Records the latency of every routed request (unmatched routes share one label). */
  instrument(fastify: FastifyInstance): void {
    fastify.addHook('onResponse', async (request, reply) => {
      const route = request.routeOptions?.url ?? 'unmatched';
      if (route === '/metrics') return;
      this.httpDuration.observe(
        { method: request.method, route, status_code: String(reply.statusCode) },
        reply.elapsedTime / 1000,
      );
    });
  }
}

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/**
 * Prometheus text (docs/reliability.md, "Metrics"). With METRICS_TOKEN set, only `Authorization: Bearer
 * $METRICS_TOKEN` is served (401 otherwise, compared in constant time); with it unset, /metrics is open in
 * development and test and does not exist (404) in production, so a deployment never publishes it by accident.
 */
@ApiExcludeController()
@Controller()
export class MetricsController {
  constructor(
    private readonly metrics: MetricsService,
    @Inject(PLATFORM_OPTIONS) private readonly options: PlatformOptions,
  ) {}

  @Get('metrics')
  async metricsText(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const { METRICS_TOKEN, NODE_ENV } = this.options.env;
    if (METRICS_TOKEN) {
      const header = request.headers.authorization;
      const token = typeof header === 'string' && header.startsWith('Bearer ') ? header.slice(7) : '';
      if (!timingSafeEqual(digest(token), digest(METRICS_TOKEN))) {
        reply.header('www-authenticate', 'Bearer realm="metrics"');
        throw unauthorized('A valid metrics bearer token is required');
      }
    } else if (NODE_ENV === 'production') {
      throw notFound(ROUTE_NOT_FOUND);
    }
    reply
      .header('content-type', this.metrics.registry.contentType)
      .header('cache-control', 'no-store')
      .send(await this.metrics.registry.metrics());
  }
}
