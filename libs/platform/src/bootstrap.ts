import type { DynamicModule, INestApplication, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance } from 'fastify';
import type { IncomingMessage, Server as HttpServer } from 'node:http';
import type { Socket } from 'node:net';
import { refuseWhileClosing } from './closing';
import { normalizeError } from './exception-filters';
import { refuseUnstorableInput } from './input-edge';
import { refuseDefaultParsedNonJson } from './json-bodies';
import { recordRoutes } from './route-table';
import { Logger } from 'nestjs-pino';
import { bindRequestLogger, logRequests, NestLogger, requestIdFor } from './logging';
import { MetricsService } from './metrics';
import { rpcServerOptions } from './rpc';
import { addSecurityHeaders, securityHeaderValues } from './security-headers';
import { PLATFORM_OPTIONS, ROOT_LOGGER, type PlatformOptions } from './tokens';

export { securityHeaders } from './security-headers';

/**
 * Longest path parameter routed; a longer one answers 414 (Fastify's default is 100). Room for the longest
 * externalUserId (200) plus a spawned UBO child's `-ubo-{index}` suffix: a child of a parent near the limit
 * was unreachable by its own id.
 */
export const MAX_PARAM_LENGTH = 256;

/**
 * Errors Fastify raises before any route runs: a URL that does not decode (400), a path parameter over
 * MAX_PARAM_LENGTH (414). Both contracts' shape for them is `{message}`; the input is never echoed.
 */
function frameworkError(
  error: Error & { statusCode?: number; code?: string },
  request: { id: string },
  reply: {
    status(code: number): typeof reply;
    header(name: string, value: string): typeof reply;
    send(body: unknown): unknown;
  },
): void {
  const { status, message } = normalizeError(error);
  reply
    .status(status)
    .header('x-request-id', request.id)
    .header('content-type', 'application/json; charset=utf-8')
    .send(JSON.stringify({ message }));
}

/**
 * Errors Node's HTTP parser raises before Fastify sees a request (headers over the limit: 431, a request
 * line or header it cannot parse: 400, a client too slow: 408), answered as `{message}` on the raw socket.
 */
export function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, reason, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', 'Request header fields too large']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'Request timeout']
        : [400, 'Bad Request', 'Malformed request'];
  const body = JSON.stringify({ message });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/**
 * A request must arrive whole within `ms` (decision 0499): Node's `requestTimeout`, which Fastify sets to 0 (none),
 * so a client sending its body a byte at a time kept a connection, and what the handler held for it, for ever. The
 * headers alone get at most 60 s (Node's `headersTimeout`). Node looks for late requests every
 * `connectionsCheckingInterval` (30 s by default): a tenth of the bound here, so a request is cut at most 10 %
 * past it. Late requests answer 408 in the error shape (`clientErrorHandler`). Set before the server listens.
 */
export function boundRequestTime(server: HttpServer, ms: number): void {
  server.requestTimeout = ms;
  server.headersTimeout = Math.min(60_000, ms);
  (server as HttpServer & { connectionsCheckingInterval: number }).connectionsCheckingInterval = Math.min(
    30_000,
    Math.max(100, Math.floor(ms / 10)),
  );
}

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
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: frameworkError as never,
    clientErrorHandler,
    // Our own hook answers requests that arrive while the server closes, in the contract's shape (0489).
    return503OnClosing: false,
  });
}

/**
 * Wiring shared by main.ts and the test harness: logger, X-Request-Id echo, Fastify-level errors in the
 * contract's shape, metrics, RPC server, shutdown hooks.
 */
export async function configureApp(
  app: NestFastifyApplication,
  opts: { rpc?: boolean; exitOnShutdown?: boolean } = {},
): Promise<void> {
  const platform = app.get<PlatformOptions>(PLATFORM_OPTIONS);
  for (const { plugin, options } of platform.httpPlugins ?? []) await app.register(plugin, options);
  app.useLogger(new NestLogger(app.get(Logger)));
  app.flushLogs();
  const fastify = app.getHttpAdapter().getInstance() as unknown as FastifyInstance;
  boundRequestTime(fastify.server, platform.env.HTTP_REQUEST_TIMEOUT_MS);
  recordRoutes(fastify);
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  // Security headers for a JSON API (docs/decisions/0012): nothing here is meant to be framed or run as a page.
  addSecurityHeaders(fastify, securityHeaderValues());
  refuseWhileClosing(fastify);
  refuseUnstorableInput(fastify);
  refuseDefaultParsedNonJson(fastify);
  bindRequestLogger(fastify, app.get(ROOT_LOGGER));
  if (platform.env.LOG_REQUESTS) logRequests(fastify, app.get(ROOT_LOGGER), platform.secretPath);
  app.get(MetricsService).instrument(fastify);
  // A process (bootstrapHttp) ends a clean shutdown with exit code 0, rather than by raising the signal again
  // (143 to a shell, an `Error` to Kubernetes): exit 1 is kept for a failed or overdue one (decision 0465).
  app.enableShutdownHooks([], { useProcessExit: opts.exitOnShutdown === true });
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
  await configureApp(app, { ...opts, exitOnShutdown: true });
  const { SHUTDOWN_TIMEOUT_MS } = app.get<PlatformOptions>(PLATFORM_OPTIONS).env;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    // Nest drains on the signal (workers finish their jobs, connections close); this bounds how long it may take.
    process.once(signal, () => setTimeout(() => process.exit(1), SHUTDOWN_TIMEOUT_MS).unref());
  }
  await app.listen(opts.port, opts.host);
  return app;
}
