import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { ClientRedis, ServerRedis, type MicroserviceOptions } from '@nestjs/microservices';
import { firstValueFrom, timeout, TimeoutError } from 'rxjs';
import { AppException } from './errors';
import type { z } from 'zod';

function redisTransportOptions(url: string) {
  const parsed = new URL(url);
  return {
    host: parsed.hostname,
    port: Number(parsed.port || 6379),
    password: parsed.password ? decodeURIComponent(parsed.password) : undefined,
    username: parsed.username ? decodeURIComponent(parsed.username) : undefined,
    db: parsed.pathname.length > 1 ? Number(parsed.pathname.slice(1)) : undefined,
    tls: parsed.protocol === 'rediss:' ? {} : undefined,
    retryAttempts: 10,
    retryDelay: 500,
  };
}

/**
 * Redis RPC server whose channels carry a namespace (QUEUE_PREFIX), so that deployments,
 * or parallel test files, sharing one Redis never answer each other's requests.
 */
export class NamespacedRedisServer extends ServerRedis {
  constructor(
    url: string,
    private readonly namespace: string,
  ) {
    super(redisTransportOptions(url));
  }

  override getRequestPattern(pattern: string): string {
    return `${this.namespace}:${pattern}`;
  }

  override getHandlerByPattern(pattern: string) {
    const prefix = `${this.namespace}:`;
    return super.getHandlerByPattern(pattern.startsWith(prefix) ? pattern.slice(prefix.length) : pattern);
  }
}

export class NamespacedRedisClient extends ClientRedis {
  constructor(
    url: string,
    private readonly namespace: string,
  ) {
    super(redisTransportOptions(url));
  }

  override getRequestPattern(pattern: string): string {
    return `${this.namespace}:${pattern}`;
  }

  override getReplyPattern(pattern: string): string {
    return `${this.namespace}:${pattern}.reply`;
  }
}

export function rpcServerOptions(url: string, namespace: string): MicroserviceOptions {
  return { strategy: new NamespacedRedisServer(url, namespace) };
}

const SERVICE_UNAVAILABLE = () =>
  new AppException(503, 'Service temporarily unavailable; retry with back-off');

/** Request/response to another service; the reply is parsed with its contract schema. */
@Injectable()
export class RpcClient implements OnApplicationShutdown {
  private readonly client: NamespacedRedisClient;

  constructor(url: string, namespace: string) {
    this.client = new NamespacedRedisClient(url, namespace);
  }

  async send<S extends z.ZodType>(
    pattern: string,
    data: unknown,
    reply: S,
    timeoutMs = 5000,
  ): Promise<z.infer<S>> {
    let raw: unknown;
    try {
      raw = await firstValueFrom(this.client.send(pattern, data).pipe(timeout(timeoutMs)));
    } catch (err) {
      // No service answered in time (it is down or overloaded): the caller's client should retry, not see a 500.
      if (err instanceof TimeoutError) throw SERVICE_UNAVAILABLE();
      throw err;
    }
    return reply.parse(raw);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.client.close();
  }
}
