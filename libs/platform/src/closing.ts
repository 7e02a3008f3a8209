import type { FastifyInstance } from 'fastify';
import { AppException } from './errors';

/** The message of a request refused because the server is closing (decision 0489). */
export const SHUTTING_DOWN_MESSAGE = 'The service is shutting down; retry with back-off';

/**
 * Requests that reach the server while it closes (pipelined or on a kept-alive connection still busy with a
 * request in flight) are answered 503 by our exception filters: the contract's body and `Retry-After: 1`, with
 * `Connection: close` (decision 0489). Fastify would answer them itself with `{error, message, statusCode}` and no
 * Retry-After, so the adapter is created with `return503OnClosing: false` (`createFastifyAdapter`); Fastify still
 * sets `Connection: close` on them. The flag is set in `preClose`, which Fastify runs as it stops routing.
 */
export function refuseWhileClosing(fastify: FastifyInstance): void {
  let closing = false;
  fastify.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  fastify.addHook('onRequest', (_request, reply, done) => {
    if (!closing) return done();
    reply.header('connection', 'close');
    done(new AppException(503, SHUTTING_DOWN_MESSAGE));
  });
}
