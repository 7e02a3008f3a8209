import { Agent, request } from 'undici';
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

  async post(target: VettedTarget, headers: Record<string, string>, body: string): Promise<SendResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    try {
      const res = await request(target.url, {
        method: 'POST',
        headers,
        body,
        dispatcher: this.agentFor(target),
        signal: AbortSignal.timeout(this.options.timeoutMs),
        headersTimeout: this.options.timeoutMs,
        bodyTimeout: this.options.timeoutMs,
      });
      const responseBody = await this.readCapped(res.body);
      const success = res.statusCode >= 200 && res.statusCode < 300;
      return {
        statusCode: res.statusCode,
        responseBody,
        errorMessage: success
          ? null
          : res.statusCode >= 300 && res.statusCode < 400
            ? `HTTP ${res.statusCode} (redirects are not followed)`
            : `HTTP ${res.statusCode}`,
        durationMs: elapsed(),
        success,
      };
    } catch (err) {
      const e = err as Error & { code?: string; cause?: Error };
      const timedOut =
        e.name === 'TimeoutError' ||
        e.code === 'UND_ERR_HEADERS_TIMEOUT' ||
        e.code === 'UND_ERR_BODY_TIMEOUT';
      const message = timedOut
        ? `timed out after ${this.options.timeoutMs} ms`
        : `${e.code ?? e.name}: ${e.message}${e.cause ? ` (${e.cause.message})` : ''}`;
      return {
        statusCode: null,
        responseBody: null,
        errorMessage: message,
        durationMs: elapsed(),
        success: false,
      };
    }
  }

  private async readCapped(body: AsyncIterable<Buffer> & { destroy?: () => void }): Promise<string | null> {
    const limit = this.options.responseBodyLimit;
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body) {
      if (size < limit) chunks.push(chunk.subarray(0, limit - size));
      size += chunk.length;
      if (size >= limit) {
        body.destroy?.();
        break;
      }
    }
    return size === 0 ? null : Buffer.concat(chunks).toString('utf8');
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
