import type { DynamicModule, INestApplication, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance } from 'fastify';
import type { IncomingMessage } from 'node:http';
import { Logger } from 'nestjs-pino';
import { bindRequestLogger, logRequests, NestLogger, requestIdFor } from './logging';
import { MetricsService } from './metrics';
import { rpcServerOptions } from './rpc';
import { PLATFORM_OPTIONS, ROOT_LOGGER, type PlatformOptions } from './tokens';

/** The Fastify adapter every app uses: request ids from X-Request-Id, raw body kept for signatures. */
export function createFastifyAdapter(
  opts: { trustProxy?: boolean | string | string[]; bodyLimit?: number } = {},
): FastifyAdapter {
  return new FastifyAdapter({
    genReqId: (req: IncomingMessage) => {
      const id = requestIdFor(req);
      (req as typeof req & { id?: string }).id = id;
      return id;
    },
    trustProxy: opts.trustProxy ?? false,
    bodyLimit: opts.bodyLimit ?? 1024 * 1024,
  });
}

/**
 * Wiring shared by main.ts and the test harness: logger, X-Request-Id echo, Fastify-level errors in the
 * contract's shape, metrics, RPC server, shutdown hooks.
 */
export async function configureApp(app: NestFastifyApplication, opts: { rpc?: boolean } = {}): Promise<void> {
  const platform = app.get<PlatformOptions>(PLATFORM_OPTIONS);
  for (const { plugin, options } of platform.httpPlugins ?? []) await app.register(plugin, options);
  app.useLogger(new NestLogger(app.get(Logger)));
  app.flushLogs();
  const fastify = app.getHttpAdapter().getInstance() as unknown as FastifyInstance;
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  bindRequestLogger(fastify, app.get(ROOT_LOGGER));
  if (platform.env.LOG_REQUESTS) logRequests(fastify, app.get(ROOT_LOGGER));
  app.get(MetricsService).instrument(fastify);
  app.enableShutdownHooks();
  if (opts.rpc !== false) {
    app.connectMicroservice(rpcServerOptions(platform.env.REDIS_URL, platform.env.QUEUE_PREFIX), {
      inheritAppConfig: true,
    });
    await app.startAllMicroservices();
  }
}

/** Creates, configures and starts an HTTP app on PORT; used by every main.ts. */
export async function bootstrapHttp(
  module: Type<unknown> | DynamicModule,
  opts: {
    port: number;
    host: string;
    rpc?: boolean;
    trustProxy?: boolean | string | string[];
    bodyLimit?: number;
  },
): Promise<INestApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(module, createFastifyAdapter(opts), {
    rawBody: true,
    bufferLogs: false,
    // Nest's own start-up chatter is not JSON; keep only its warnings and errors until pino takes over.
    logger: ['error', 'warn'],
  });
  await configureApp(app, opts);
  const { SHUTDOWN_TIMEOUT_MS } = app.get<PlatformOptions>(PLATFORM_OPTIONS).env;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    // Nest drains on the signal (workers finish their jobs, connections close); this bounds how long it may take.
    process.once(signal, () => setTimeout(() => process.exit(1), SHUTDOWN_TIMEOUT_MS).unref());
  }
  await app.listen(opts.port, opts.host);
  return app;
}
