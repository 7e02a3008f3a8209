import type { LoggerService } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { LoggerModule } from 'nestjs-pino';
import { type Store, storage } from 'nestjs-pino/storage';
import pino, { type Logger, type LoggerOptions } from 'pino';
import { REDACTED, redactSecrets } from './redact';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A caller's X-Request-Id is kept when it is sane; otherwise the service mints one. */
export function requestIdFor(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  const value = Array.isArray(incoming) ? incoming[0] : incoming;
  return value && REQUEST_ID.test(value) ? value : randomUUID();
}

export interface LoggingOptions {
  service: string;
  level: string;
  /** Where lines go; a test passes a stream to read them back. */
  destination?: pino.DestinationStream;
}

/** pino options shared by the HTTP logger and standalone workers: JSON lines, secrets redacted at the logger. */
export function pinoOptions(opts: Pick<LoggingOptions, 'service' | 'level'>): LoggerOptions {
  return {
    level: opts.level,
    base: { service: opts.service },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: {
      level: (label) => ({ level: label }),
      log: (object) => redactSecrets(object),
    },
    serializers: {
      err: pino.stdSerializers.err,
    },
  };
}

export function createLogger(opts: LoggingOptions): Logger {
  return opts.destination ? pino(pinoOptions(opts), opts.destination) : pino(pinoOptions(opts));
}

const QUIET_PATHS = /^\/(health|metrics)(\?|$)/;

/**
 * nestjs-pino module: the `Logger`/`PinoLogger` providers, writing through `logger`. It installs no middleware
 * (`forRoutes: []`): the per-request binding is `bindRequestLogger` below, which does the same job as
 * pino-http + nestjs-pino's middleware (two child loggers, one of them serialising the whole request, and a
 * middie pass on every request) for a fraction of the cost.
 */
export function loggingModule(logger: Logger) {
  return LoggerModule.forRoot({ pinoHttp: { logger }, forRoutes: [] });
}

/**
 * nestjs-pino's per-request store; the `{requestId}` child logger is built the first time a line is logged
 * during the request (most requests log nothing, or only the access line, which carries its own requestId).
 */
class RequestLogStore implements Store {
  private child?: Logger;
  responseLogger = undefined;

  constructor(
    private readonly root: Logger,
    private readonly requestId: string,
  ) {}

  get logger(): Logger {
    return (this.child ??= this.root.child({ requestId: this.requestId }));
  }

  /** PinoLogger.assign replaces it with a child carrying extra fields. */
  set logger(value: Logger) {
    this.child = value;
  }
}

/**
 * Every line logged during a request (through Nest's Logger or PinoLogger) carries its `requestId`: the rest
 * of the request runs inside this async-local store (Fastify keeps the context across body parsing).
 */
export function bindRequestLogger(fastify: FastifyInstance, logger: Logger): void {
  fastify.addHook('onRequest', (request, _reply, done) => {
    storage.run(new RequestLogStore(logger, request.id), done);
  });
}

/**
 * A function that replaces the segment `secretPath` captures (group 1) by [REDACTED], wherever it occurs in a
 * URL or a path; the identity without a pattern.
 */
export function pathRedactor(secretPath: RegExp | undefined): (url: string) => string {
  if (!secretPath) return (url) => url;
  const every = new RegExp(
    secretPath.source,
    secretPath.flags.includes('g') ? secretPath.flags : `${secretPath.flags}g`,
  );
  return (url) =>
    url.replace(every, (match: string, segment: string) => {
      const at = match.lastIndexOf(segment);
      return `${match.slice(0, at)}${REDACTED}${match.slice(at + segment.length)}`;
    });
}

/**
 * One access line per request. Headers are included only on 4xx and 5xx answers (where they help), and
 * go through the same redaction as every other field; a capability in the path (`secretPath`) is redacted
 * in the URL and in the Referer.
 */
export function logRequests(fastify: FastifyInstance, logger: Logger, secretPath?: RegExp): void {
  const redactPath = pathRedactor(secretPath);
  fastify.addHook('onResponse', async (request, reply) => {
    if (QUIET_PATHS.test(request.url)) return;
    const status = reply.statusCode;
    const line: Record<string, unknown> = {
      requestId: request.id,
      method: request.method,
      url: redactPath(request.url),
      statusCode: status,
      durationMs: Math.round(reply.elapsedTime * 10) / 10,
    };
    if (status >= 400) {
      const { referer } = request.headers;
      line.headers =
        typeof referer === 'string' ? { ...request.headers, referer: redactPath(referer) } : request.headers;
    }
    if (status >= 500) logger.error(line, 'request completed');
    else if (status >= 400) logger.warn(line, 'request completed');
    else logger.info(line, 'request completed');
  });
}

/** Nest's route-mapping lines at start-up: useful when debugging routing, noise otherwise. */
const ROUTE_MAPPING_CONTEXTS = new Set(['RoutesResolver', 'RouterExplorer']);

/**
 * The logger Nest itself writes through: everything goes to pino as JSON, and the route-mapping chatter
 * (`Mapped {/health, GET} route`) is logged at debug instead of info.
 */
export class NestLogger implements LoggerService {
  constructor(private readonly inner: LoggerService) {}

  log(message: unknown, ...rest: unknown[]): void {
    const context = rest[rest.length - 1];
    if (typeof context === 'string' && ROUTE_MAPPING_CONTEXTS.has(context))
      this.inner.debug?.(message, ...rest);
    else this.inner.log(message, ...rest);
  }

  error(message: unknown, ...rest: unknown[]): void {
    this.inner.error(message, ...rest);
  }

  warn(message: unknown, ...rest: unknown[]): void {
    this.inner.warn(message, ...rest);
  }

  debug(message: unknown, ...rest: unknown[]): void {
    this.inner.debug?.(message, ...rest);
  }

  verbose(message: unknown, ...rest: unknown[]): void {
    this.inner.verbose?.(message, ...rest);
  }

  fatal(message: unknown, ...rest: unknown[]): void {
    (this.inner.fatal ?? this.inner.error).call(this.inner, message, ...rest);
  }
}
