import type { FastifyInstance } from 'fastify';
import { createRequire } from 'node:module';

/**
 * Helmet for JSON APIs: a CSP that allows nothing but the app's own Swagger UI assets, no framing, no
 * sniffing, no referrer, HSTS for a year (docs/decisions/0012).
 */
export const securityHeaders = {
  global: true,
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'none'"],
      scriptSrc: ["'self'", "'unsafe-inline'"],
      styleSrc: ["'self'", "'unsafe-inline'"],
      imgSrc: ["'self'", 'data:'],
      connectSrc: ["'self'"],
      frameAncestors: ["'none'"],
      baseUri: ["'none'"],
      formAction: ["'none'"],
    },
  },
  crossOriginEmbedderPolicy: false,
  referrerPolicy: { policy: 'no-referrer' },
  hsts: { maxAge: 31_536_000, includeSubDomains: true },
};

type HelmetMiddleware = (
  req: unknown,
  res: { setHeader(name: string, value: string): void; removeHeader(name: string): void },
  next: (error?: unknown) => void,
) => void;

/** The `helmet` that @fastify/helmet itself runs (its dependency, resolved from where it is installed). */
const helmetOfPlugin = (): ((options: object) => HelmetMiddleware) =>
  createRequire(require.resolve('@fastify/helmet'))('helmet') as (options: object) => HelmetMiddleware;

/**
 * The headers @fastify/helmet sets with `options`, computed once: they do not depend on the request, but the
 * plugin rebuilds every helmet middleware (and re-parses the CSP directives) on each request
 * (docs/decisions/0106). Headers helmet removes (X-Powered-By) are never set by these apps.
 */
export function securityHeaderValues(options: object = securityHeaders): [string, string][] {
  const { global: _global, ...config } = options as { global?: boolean };
  const headers = new Map<string, string>();
  let failure: unknown;
  helmetOfPlugin()(config)(
    {},
    {
      setHeader: (name, value) => headers.set(name.toLowerCase(), String(value)),
      removeHeader: (name) => headers.delete(name.toLowerCase()),
    },
    (error) => (failure = error),
  );
  if (failure) throw failure;
  return [...headers];
}

/**
 * Sets `headers` on every response, in an onRequest hook on the raw response as @fastify/helmet does (so a
 * route or plugin that sets one of them later still overrides it), from values computed once.
 */
export function addSecurityHeaders(fastify: FastifyInstance, headers: [string, string][]): void {
  fastify.addHook('onRequest', (_request, reply, done) => {
    const res = reply.raw;
    for (const [name, value] of headers) res.setHeader(name, value);
    done();
  });
}
