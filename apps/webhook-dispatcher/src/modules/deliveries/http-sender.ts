import { Agent, type Dispatcher } from 'undici';
import type { LookupFunction } from 'node:net';
import type { SecureContext } from 'node:tls';
import type { VettedTarget } from './egress-guard';

export interface SendResult {
  statusCode: number | null;
  responseBody: string | null;
  errorMessage: string | null;
  durationMs: number;
  success: boolean;
}

export interface SenderOptions {
  timeoutMs: number;
  responseBodyLimit: number;
  /** Trust for receivers' certificates other than Node's public roots (WEBHOOK_CA_FILE); parsed once. */
  secureContext?: SecureContext;
}

type UndiciError = Error & { code?: string; cause?: Error };

/** What a reply means: a 2xx is a success; a redirect is a failure and is not followed. */
function replied(statusCode: number, responseBody: string | null, durationMs: number): SendResult {
  const success = statusCode >= 200 && statusCode < 300;
  return {
    statusCode,
    responseBody,
    errorMessage: success
      ? null
      : statusCode >= 300 && statusCode < 400
        ? `HTTP ${statusCode} (redirects are not followed)`
        : `HTTP ${statusCode}`,
    durationMs,
    success,
  };
}

/** An attempt's error message: undici's code and message (and cause), or the timeout. */
function failure(e: UndiciError, timeoutMs: number): string {
  if (e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT')
    return `timed out after ${timeoutMs} ms`;
  return `${e.code ?? e.name}: ${e.message}${e.cause ? ` (${e.cause.message})` : ''}`;
}

/**
 * POSTs to a vetted target. Each (host, vetted address) pair has its own keep-alive Agent whose lookup
 * answers only that address, so the socket goes to the address the guard approved (no DNS rebinding
 * between check and connect) while TLS still verifies and sends SNI for the hostname. Redirects are never
 * followed.
 */
export class HttpSender {
  private readonly agents = new Map<string, Agent>();
  private static readonly MAX_AGENTS = 500;

  constructor(private readonly options: SenderOptions) {}

  private agentFor(target: VettedTarget): Agent {
    const key = `${target.url.host}|${target.address.address}`;
    let agent = this.agents.get(key);
    if (agent) return agent;
    const { address, family } = target.address;
    const lookup = ((_host: string, opts: { all?: boolean }, cb: (...args: unknown[]) => void) => {
      if (opts?.all) cb(null, [{ address, family }]);
      else cb(null, address, family);
    }) as unknown as LookupFunction;
    agent = new Agent({
      connect: { lookup, secureContext: this.options.secureContext, timeout: this.options.timeoutMs },
      connections: 64,
      pipelining: 1,
      keepAliveTimeout: 10_000,
    });
    if (this.agents.size >= HttpSender.MAX_AGENTS) {
      const [oldestKey, oldest] = this.agents.entries().next().value as [string, Agent];
      this.agents.delete(oldestKey);
      void oldest.close().catch(() => undefined);
    }
    this.agents.set(key, agent);
    return agent;
  }

  /**
   * One POST on undici's dispatch API (decision 0408): no response stream and no AbortSignal, one timer for
   * the whole attempt. The reply is kept up to responseBodyLimit bytes, then the request is cut. The attempt
   * ends at the first of: the reply's end, the cap, an error, or timeoutMs after it started (a request still
   * waiting for a connection then is cut as soon as it gets one). Never rejects.
   */
  post(
    target: VettedTarget,
    headers: Record<string, string>,
    body: string,
    /** Shorter than the configured timeout when the claim's lease ends sooner (decision 0452). */
    timeoutMs = this.options.timeoutMs,
    /**
     * The attempt's bound that a timeout reports: `timeoutMs` is what is left of it when the DNS check before the
     * request took some (decision 0497).
     */
    boundMs = timeoutMs,
  ): Promise<SendResult> {
    const { responseBodyLimit: limit } = this.options;
    const started = performance.now();
    return new Promise<SendResult>((resolve) => {
      let statusCode = 0;
      let size = 0;
      const chunks: Buffer[] = [];
      let controller: Dispatcher.DispatchController | null = null;
      let over = false;
      const finish = (error: string | null): void => {
        if (over) return;
        over = true;
        clearTimeout(deadline);
        const durationMs = Math.round(performance.now() - started);
        if (error !== null)
          resolve({ statusCode: null, responseBody: null, errorMessage: error, durationMs, success: false });
        else
          resolve(
            replied(statusCode, size === 0 ? null : Buffer.concat(chunks).toString('utf8'), durationMs),
          );
      };
      const deadline = setTimeout(() => {
        finish(`timed out after ${boundMs} ms`);
        controller?.abort(new Error('attempt deadline'));
      }, timeoutMs);
      const handler: Dispatcher.DispatchHandler = {
        onRequestStart(c) {
          controller = c;
          if (over) c.abort(new Error('attempt deadline'));
        },
        onResponseStart(_c, status) {
          statusCode = status;
        },
        onResponseData(c, chunk) {
          if (over) return; // ended by the deadline or the cap: nothing more is kept
          chunks.push(chunk.subarray(0, limit - size));
          size += chunk.length;
          if (size < limit) return;
          finish(null);
          c.abort(new Error('reply over the body limit'));
        },
        onResponseEnd() {
          finish(null);
        },
        onResponseError(_c, err) {
          finish(failure(err as UndiciError, timeoutMs));
        },
      };
      try {
        this.agentFor(target).dispatch(
          {
            origin: target.url.origin,
            path: target.url.pathname + target.url.search,
            method: 'POST',
            headers,
            body,
            headersTimeout: timeoutMs,
            bodyTimeout: timeoutMs,
          },
          handler,
        );
      } catch (err) {
        finish(failure(err as UndiciError, timeoutMs));
      }
    });
  }

  /** Lets in-flight attempts finish for a short grace period, then cuts what is left (bounded shutdown). */
  async close(graceMs = 2000): Promise<void> {
    const agents = [...this.agents.values()];
    this.agents.clear();
    await Promise.all(
      agents.map(async (agent) => {
        let timer: NodeJS.Timeout | undefined;
        const graceful = agent.close().then(
          () => true,
          () => true,
        );
        const late = new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(false), graceMs);
        });
        const closed = await Promise.race([graceful, late]);
        clearTimeout(timer);
        if (!closed) await agent.destroy().catch(() => undefined);
      }),
    );
  }
}
