import type { FastifyInstance } from 'fastify';
import type { IncomingHttpHeaders } from 'node:http';
import { AppException } from './errors';

export const NOT_JSON_MESSAGE = 'Request bodies must be JSON: send Content-Type: application/json';

/**
 * Media types that Fastify (text/plain) and Nest's Fastify adapter (form-encoded) parse by default and that no
 * Tessera route takes: both contracts say "Bodies are JSON". The routes that take other bytes register their
 * own parser (the SDK upload's multipart, media-store's octet-stream) and are not concerned.
 */
const DEFAULT_PARSED_NON_JSON = new Set(['application/x-www-form-urlencoded', 'text/plain']);

/** True when the request carries a body (a length above 0, or chunked). */
export function carriesBody(headers: IncomingHttpHeaders): boolean {
  return Number(headers['content-length'] ?? 0) > 0 || headers['transfer-encoding'] !== undefined;
}

/** The media type of the request's Content-Type, lower case, without parameters ('' when there is none). */
export function mediaTypeOf(headers: IncomingHttpHeaders): string {
  return (headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

export const notJson = () => new AppException(415, NOT_JSON_MESSAGE);

/**
 * Refuses with 415, before the body is parsed, a form-encoded or text/plain body (decision 0481). A form body
 * was read into fields and acted on: on verification-api a `PATCH .../ubos/0` with `fullName=x` changed the
 * row and spawn-kyc created a child, as custody-api did before decision 0473.
 */
export function refuseDefaultParsedNonJson(fastify: FastifyInstance): void {
  fastify.addHook('preParsing', (request, _reply, payload, done) => {
    if (carriesBody(request.headers) && DEFAULT_PARSED_NON_JSON.has(mediaTypeOf(request.headers))) {
      return done(notJson());
    }
    done(null, payload);
  });
}
