import { TesseraApiError, TesseraNetworkError } from './errors';
import {
  backoffDelayMs,
  resolveRetryOptions,
  retryAfterMs,
  type ResolvedRetryOptions,
  type RetryOptions,
} from './retry-policy';

export type HttpMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Where the client reports what it does about refused or failed tries. Never given a secret. */
export interface ClientLogger {
  warn(message: string, details: Record<string, unknown>): void;
}

/** The default logger: one `console.warn` line per retry and per 429 (the custody contract: "log every 429"). */
export const consoleLogger: ClientLogger = {
  warn: (message, details) => console.warn(`[tessera-client] ${message}`, details),
};

/** A logger that drops everything (pass it, or `logger: null`, to silence the client). */
export const silentLogger: ClientLogger = { warn: () => undefined };

export type RetryReason = 'rate-limited' | 'unavailable' | 'network-error' | 're-sign';

/** One decision to try again, reported to `onRetry` and the logger before the sleep. */
export interface RetryEvent {
  reason: RetryReason;
  method: HttpMethod;
  /** Path and query as sent. */
  path: string;
  /** The try that was just refused (1 for the first). */
  attempt: number;
  status?: number;
  /** How long the client sleeps before the next try (0 for a re-sign). */
  delayMs: number;
  /** True when the delay came from the server's `Retry-After`. */
  fromRetryAfter: boolean;
  idempotencyKey?: string;
}

export interface TransportOptions {
  /** The API's origin, with a path prefix if a gateway adds one (`https://custody.example.com`). */
  baseUrl: string;
  /** Retry and back-off settings (defaults: the contracts' advice). */
  retry?: RetryOptions;
  /** Per-try timeout in ms (default 30000). A timed-out try counts as a network error. */
  timeoutMs?: number;
  /** Where retries and 429s are logged (default `consoleLogger`; `null` or `silentLogger` for none). */
  logger?: ClientLogger | null;
  /** Called for every retry decision, before the sleep. */
  onRetry?: (event: RetryEvent) => void;
  /** Injectable sleep (tests pass one that records instead of waiting). */
  sleep?: (ms: number) => Promise<void>;
  /** Injectable randomness for jitter, in [0, 1). */
  random?: () => number;
  /** Injectable `fetch` (default the global one). */
  fetch?: typeof fetch;
  /** Extra headers on every request (never put credentials here; the client adds them). */
  headers?: Record<string, string>;
}

/** How a client authenticates one try. Called again for every try. */
export interface Authenticator {
  headers(method: HttpMethod, pathWithQuery: string, rawBody: string): Record<string, string>;
  /** True when a 401 may be answered by signing again once (custody's replay and drift rules). */
  resignOn401: boolean;
}

export type QueryValue = string | number | boolean | null | undefined;

export interface RequestSpec {
  method: HttpMethod;
  /** Path with its parameters already filled in (`/wallets/9f…/balance`). */
  path: string;
  query?: Record<string, QueryValue>;
  body?: unknown;
  /** Sent as `Idempotency-Key`; a call carrying one is retried on 5xx and network errors. */
  idempotencyKey?: string;
  /** Overrides the default: GET, HEAD and DELETE are idempotent, and so is any call with an idempotency key. */
  idempotent?: boolean;
  /** `bytes` returns the body as a Buffer (media downloads); default `json`. */
  responseType?: 'json' | 'bytes';
  signal?: AbortSignal;
}

export interface ApiResponse<T> {
  data: T;
  status: number;
  headers: Headers;
  /** How many HTTP tries this call took. */
  attempts: number;
}

/** Fills `{name}` parameters of a path template, each encoded as one path segment. */
export function fillPath(template: string, params: Record<string, string | number>): string {
  return template.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined || value === '') throw new TypeError(`path parameter ${name} is required`);
    return encodeURIComponent(String(value));
  });
}

function queryString(query: Record<string, QueryValue> | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query))
    if (value !== undefined && value !== null) params.append(key, String(value));
  const text = params.toString();
  return text ? `?${text}` : '';
}

async function readBody(res: Response, responseType: 'json' | 'bytes'): Promise<unknown> {
  if (responseType === 'bytes' && res.ok) return Buffer.from(await res.arrayBuffer());
  const text = await res.text();
  if (text === '') return undefined;
  if ((res.headers.get('content-type') ?? '').includes('json')) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The shared request core of both clients: authentication per try, retries, back-off, errors. */
export class Transport {
  private readonly origin: URL;
  private readonly retry: ResolvedRetryOptions;
  private readonly logger: ClientLogger;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;
  private readonly fetchImpl: typeof fetch;
  private readonly timeoutMs: number;

  constructor(
    private readonly options: TransportOptions,
    private readonly auth: Authenticator,
  ) {
    if (!options.baseUrl) throw new TypeError('baseUrl is required');
    this.origin = new URL(options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`);
    this.retry = resolveRetryOptions(options.retry);
    this.logger = options.logger === null ? silentLogger : (options.logger ?? consoleLogger);
    this.sleep = options.sleep ?? defaultSleep;
    this.random = options.random ?? Math.random;
    this.fetchImpl = options.fetch ?? fetch;
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  async request<T>(spec: RequestSpec): Promise<ApiResponse<T>> {
    const url = new URL(spec.path.replace(/^\//, '') + queryString(spec.query), this.origin);
    const pathWithQuery = url.pathname + url.search;
    // Serialised once: every try sends (and signs) exactly the same bytes.
    const rawBody = spec.body === undefined ? '' : JSON.stringify(spec.body);
    const idempotent =
      spec.idempotent ??
      (spec.method === 'GET' ||
        spec.method === 'HEAD' ||
        spec.method === 'DELETE' ||
        spec.idempotencyKey !== undefined);
    let resigned = false;
    let backoffs = 0;

    for (let attempt = 1; ; attempt++) {
      // A caller that gave up during a back-off sleep gets its abort, not another try.
      spec.signal?.throwIfAborted();
      const last = attempt >= this.retry.maxAttempts;
      const headers: Record<string, string> = {
        accept: 'application/json',
        ...this.options.headers,
        ...this.auth.headers(spec.method, pathWithQuery, rawBody),
      };
      if (rawBody !== '') headers['content-type'] = 'application/json';
      if (spec.idempotencyKey !== undefined) headers['idempotency-key'] = spec.idempotencyKey;

      let res: Response;
      try {
        const timeout = AbortSignal.timeout(this.timeoutMs);
        res = await this.fetchImpl(url, {
          method: spec.method,
          headers,
          body: rawBody === '' ? undefined : rawBody,
          redirect: 'manual',
          signal: spec.signal ? AbortSignal.any([spec.signal, timeout]) : timeout,
        });
      } catch (err) {
        if (spec.signal?.aborted) throw err;
        if (!idempotent || last)
          throw new TesseraNetworkError(
            `${spec.method} ${url.pathname} got no answer: ${(err as Error).message}`,
            attempt,
            err,
          );
        const delayMs = backoffDelayMs(++backoffs, this.retry, this.random);
        await this.pause(spec, pathWithQuery, attempt, 'network-error', undefined, delayMs, false);
        continue;
      }

      if (res.status === 429) {
        const hinted = retryAfterMs(res.headers.get('retry-after'), Date.now(), this.retry.maxRetryAfterMs);
        await res.arrayBuffer().catch(() => undefined);
        if (last) {
          this.logger.warn(`429 on ${spec.method} ${url.pathname}; giving up after ${attempt} tries`, {
            method: spec.method,
            path: pathWithQuery,
            attempt,
            status: 429,
          });
          throw new TesseraApiError(
            429,
            'Rate limit exceeded',
            undefined,
            undefined,
            requestId(res),
            attempt,
          );
        }
        const delayMs = hinted ?? backoffDelayMs(++backoffs, this.retry, this.random);
        await this.pause(spec, pathWithQuery, attempt, 'rate-limited', 429, delayMs, hinted !== undefined);
        continue;
      }

      if (res.status === 401 && this.auth.resignOn401 && !resigned && !last) {
        // Custody: a 401 may be clock drift or a replayed tuple; sign again (new timestamp) once, at once.
        resigned = true;
        await res.arrayBuffer().catch(() => undefined);
        await this.pause(spec, pathWithQuery, attempt, 're-sign', 401, 0, false);
        continue;
      }

      if (this.retry.retryStatuses.includes(res.status) && idempotent && !last) {
        await res.arrayBuffer().catch(() => undefined);
        const hinted = retryAfterMs(res.headers.get('retry-after'), Date.now(), this.retry.maxRetryAfterMs);
        const delayMs = hinted ?? backoffDelayMs(++backoffs, this.retry, this.random);
        await this.pause(
          spec,
          pathWithQuery,
          attempt,
          'unavailable',
          res.status,
          delayMs,
          hinted !== undefined,
        );
        continue;
      }

      const data = await readBody(res, spec.responseType ?? 'json');
      if (res.status >= 200 && res.status < 300)
        return { data: data as T, status: res.status, headers: res.headers, attempts: attempt };
      throw apiError(res, data, attempt);
    }
  }

  private async pause(
    spec: RequestSpec,
    path: string,
    attempt: number,
    reason: RetryReason,
    status: number | undefined,
    delayMs: number,
    fromRetryAfter: boolean,
  ): Promise<void> {
    const event: RetryEvent = {
      reason,
      method: spec.method,
      path,
      attempt,
      status,
      delayMs,
      fromRetryAfter,
      ...(spec.idempotencyKey !== undefined ? { idempotencyKey: spec.idempotencyKey } : {}),
    };
    this.logger.warn(
      `${status ?? reason} on ${spec.method} ${path.split('?')[0]}; try ${attempt + 1} in ${delayMs} ms`,
      { ...event },
    );
    this.options.onRetry?.(event);
    if (delayMs > 0) await this.sleep(delayMs);
  }
}

function requestId(res: Response): string | undefined {
  return res.headers.get('x-request-id') ?? undefined;
}

function apiError(res: Response, data: unknown, attempts: number): TesseraApiError {
  const body = data as { message?: unknown; errors?: unknown } | undefined;
  const message =
    typeof body?.message === 'string'
      ? body.message
      : `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`;
  const errors =
    body?.errors && typeof body.errors === 'object' ? (body.errors as Record<string, string[]>) : undefined;
  return new TesseraApiError(res.status, message, data, errors, requestId(res), attempts);
}
