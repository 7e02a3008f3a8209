import type { Test } from 'supertest';
import { TEST_REDIS_URL } from './redis';
import { startTcpProxy, type TcpProxy } from './tcp-proxy';

/** The command timeout the hung-Redis suites give the request path's connection (REDIS_COMMAND_TIMEOUT_MS, 0484). */
export const HANG_COMMAND_TIMEOUT_MS = 500;
/** What a request may take on top of it: the guard's other work, and a loaded 2-core machine. */
const HANG_SLACK_MS = 1500;

/** A loopback proxy to the test Redis, to cut or hold (decisions 0470, 0478). */
export const testRedisProxy = (): Promise<TcpProxy> =>
  startTcpProxy('127.0.0.1', Number(new URL(TEST_REDIS_URL).port || 6379));

/**
 * Sends a request while the proxy to Redis is held and expects the contract's 503 (`Retry-After: 1`, the
 * dependency message) within the command timeout and its slack, not a hang (decision 0484).
 */
export async function expectPromptUnavailable(send: () => Test): Promise<void> {
  const started = Date.now();
  const res = await send().timeout(HANG_COMMAND_TIMEOUT_MS + 8000);
  const tookMs = Date.now() - started;
  expect({ status: res.status, retryAfter: res.headers['retry-after'], body: res.body }).toEqual({
    status: 503,
    retryAfter: '1',
    body: { message: 'Service temporarily unavailable; retry with back-off' },
  });
  expect(tookMs).toBeLessThan(HANG_COMMAND_TIMEOUT_MS + HANG_SLACK_MS);
}
