import { ConfigError } from './config';
import { normalizeError } from './exception-filters';

/**
 * What an operator CLI prints when a command fails: one JSON object, never a stack trace. A configuration problem
 * names every bad or missing variable (as the apps do at boot); a refused call has its API status and message;
 * anything else says what went wrong in one line.
 */
export function cliFailure(err: unknown): { message: string; status?: number; errors?: unknown } {
  if (err instanceof ConfigError) return { message: err.message };
  const normalized = normalizeError(err);
  if (normalized.status < 500) {
    return { status: normalized.status, message: normalized.message, errors: normalized.errors };
  }
  return { status: normalized.status, message: err instanceof Error ? err.message : String(err) };
}
