import { randomUUID } from 'node:crypto';

/** The custody contract's rule for `Idempotency-Key`: up to 64 characters from `A-Za-z0-9_-`. */
export const IDEMPOTENCY_KEY_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** A fresh key for one logical call: a random UUID (36 characters, all allowed). */
export function newIdempotencyKey(): string {
  return randomUUID();
}

/** The caller's key when given (checked against the contract before anything is sent), else a fresh one. */
export function idempotencyKeyFor(given: string | undefined): string {
  if (given === undefined) return newIdempotencyKey();
  if (!IDEMPOTENCY_KEY_PATTERN.test(given))
    throw new TypeError('idempotencyKey must be 1 to 64 characters from A-Za-z0-9_-');
  return given;
}
