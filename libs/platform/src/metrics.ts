import { Controller, Get, Injectable, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyInstance, FastifyReply } from 'fastify';
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

@ApiExcludeController()
@Controller()
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  @Get('metrics')
  async metricsText(@Res() reply: FastifyReply): Promise<void> {
    reply
      .header('content-type', this.metrics.registry.contentType)
      .send(await this.metrics.registry.metrics());
  }
}
