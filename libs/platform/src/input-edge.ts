import type { FastifyInstance, FastifyRequest } from 'fastify';
import { badRequest } from './errors';

/**
 * Text Postgres cannot store: U+0000 (refused in `text`, `varchar` and `jsonb`) and unpaired UTF-16
 * surrogates (`jsonb` refuses their escapes; `text` would silently store U+FFFD instead).
 */
export function unstorableText(value: string): boolean {
  return value.includes('\u0000') || !(value as WellFormed).isWellFormed();
}

/** ES2024 `String.prototype.isWellFormed` (Node ≥ 20); the compiler's lib is older. */
type WellFormed = string & { isWellFormed(): boolean };

/** Walks a parsed body without recursion (a deep document cannot overflow the stack); keys count too. */
function findUnstorable(root: unknown): boolean {
  const stack: unknown[] = [root];
  let visited = 0;
  while (stack.length > 0) {
    const value = stack.pop();
    if (++visited > 1_000_000) return false;
    if (typeof value === 'string') {
      if (unstorableText(value)) return true;
    } else if (Array.isArray(value)) {
      for (const item of value) stack.push(item);
    } else if (value !== null && typeof value === 'object') {
      // Bytes and streams (raw bodies, multipart files) are not text; every other object is walked (the
      // router's params and the query parser's result have null-prototype classes of their own).
      if (ArrayBuffer.isView(value) || typeof (value as { pipe?: unknown }).pipe === 'function') continue;
      for (const [key, item] of Object.entries(value)) {
        if (unstorableText(key)) return true;
        stack.push(item);
      }
    }
  }
  return false;
}

/** Which part of the request carries unstorable text, or undefined when it is clean. */
export function unstorablePart(request: Pick<FastifyRequest, 'params' | 'query' | 'headers' | 'body'>) {
  if (findUnstorable(request.params)) return 'path';
  if (findUnstorable(request.query)) return 'query string';
  if (findUnstorable(request.headers)) return 'headers';
  if (findUnstorable(request.body)) return 'body';
  return undefined;
}

/**
 * The one edge for bad input (docs/decisions/0010): before any guard or handler of any app runs, a request
 * whose path parameters, query string, headers or parsed body carry text Postgres cannot store is refused
 * with 400 in the app's error shape. The message names the part, never the value.
 */
export function refuseUnstorableInput(fastify: FastifyInstance): void {
  fastify.addHook('preValidation', (request, _reply, done) => {
    const part = unstorablePart(request);
    if (!part) return done();
    const message = `The ${part} contains a NUL character or invalid Unicode`;
    done(badRequest(message, { [part === 'query string' ? 'query' : part]: [message] }));
  });
}
