import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { ClientRedis, type RedisStatus, ServerRedis, type MicroserviceOptions } from '@nestjs/microservices';
import type { Redis } from 'ioredis';
import { firstValueFrom, timeout, TimeoutError } from 'rxjs';
import { AppException } from './errors';
import { closeConnection, logConnectionErrors, reconnectLog } from './redis';
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
  };
}

/** The longest wait between two reconnection attempts of the RPC transport's connections. */
const RPC_RECONNECT_MAX_DELAY_MS = 2000;

/**
 * Nest's Redis transport gives up after `retryAttempts` reconnections: with 10 attempts 500 ms apart, an outage
 * longer than about 5 s left the RPC server unsubscribed and the client unconnected for good, so every RPC
 * answered 503 after Redis was back, until the process restarted (decision 0470). Its connections now
 * reconnect as the service's own do, for as long as Redis is away, until the transport is closed.
 */
function reconnectDelayMs(times: number, closed: boolean): number | undefined {
  return closed ? undefined : Math.min(times * 100, RPC_RECONNECT_MAX_DELAY_MS);
}

/**
 * Closes the transport's two connections without waiting for a Redis that is away (closeConnection): Nest's own
 * close sends QUIT, which fails on an ended connection and waits on a reconnecting one.
 */
async function closeTransport(clients: (Redis | null | undefined)[]): Promise<void> {
  await Promise.all(clients.filter((c): c is Redis => !!c).map(closeConnection));
}

/**
 * Nest's transport logs `Reconnecting to Redis...` on every attempt; this listener does what its own does (the
 * transport's status) and logs them throttled (reconnectLog, decision 0478). `whenReconnecting` runs first, for
 * what the client also resets.
 */
function listenForReconnects(
  client: Redis,
  connection: string,
  transport: { closed: () => boolean; connectedOnce: () => boolean; whenReconnecting: () => void },
): void {
  const log = reconnectLog(connection);
  client.on('reconnecting', () => {
    if (transport.closed()) return;
    transport.whenReconnecting();
    if (transport.connectedOnce()) log.reconnecting();
  });
  client.on('ready', log.ready);
}

/** Nest's RedisStatus.RECONNECTING (a const enum, which isolated modules cannot read). */
const RECONNECTING = 'reconnecting' as RedisStatus;

/** How long a request's claim is kept: well past any caller's timeout, so a late replica still finds it. */
const CLAIM_MS = 60_000;

/** The request id of a raw RPC message, or undefined for an event (no reply expected) or garbage. */
function requestIdOf(buffer: string | Buffer): string | undefined {
  try {
    const id = (JSON.parse(buffer.toString()) as { id?: unknown }).id;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Redis RPC server whose channels carry a namespace (QUEUE_PREFIX), so that deployments,
 * or parallel test files, sharing one Redis never answer each other's requests.
 *
 * Nest's Redis transport is publish/subscribe: every replica of a service receives every request. Each request
 * is therefore claimed first (`SET <namespace>:rpc-claim:<id> NX`), and only the replica whose claim succeeds
 * runs the handler and replies; the others drop it. Without the claim, two webhook-dispatcher replicas both
 * ran a partner's PUT (each rotating the signing secret: the partner got one, the other was stored), both ran
 * a retry (one answered 409 "not failed" after the other re-queued it) and both sent a test delivery. A claim
 * that cannot be written (Redis away) runs nothing: the caller times out and answers 503, retry with back-off.
 */
export class NamespacedRedisServer extends ServerRedis {
  private readonly claimLogger = new Logger('RpcServer');

  constructor(
    url: string,
    private readonly namespace: string,
  ) {
    super(redisTransportOptions(url));
  }

  override createRetryStrategy(times: number): number | undefined {
    return reconnectDelayMs(times, this.isManuallyClosed);
  }

  /** Connection errors are logged throttled, at warn (decision 0468), not one error line each. */
  override registerErrorListener(client: Redis): void {
    logConnectionErrors(client, `${this.namespace}:rpc-server`);
  }

  override registerReconnectListener(client: Redis): void {
    listenForReconnects(client, `${this.namespace}:rpc-server`, {
      closed: () => this.isManuallyClosed,
      connectedOnce: () => this.wasInitialConnectionSuccessful,
      whenReconnecting: () => this._status$.next(RECONNECTING),
    });
  }

  override async close(): Promise<void> {
    this.isManuallyClosed = true;
    await closeTransport([this.pubClient, this.subClient]);
  }

  override async handleMessage(
    channel: string,
    buffer: string,
    pub: Redis,
    pattern: string,
  ): Promise<unknown> {
    const id = requestIdOf(buffer);
    if (id !== undefined) {
      let claimed: string | null;
      try {
        claimed = await pub.set(`${this.namespace}:rpc-claim:${id}`, '1', 'PX', CLAIM_MS, 'NX');
      } catch (err) {
        this.claimLogger.warn(`RPC request not claimed (${(err as Error).message}); the caller will retry`);
        return undefined;
      }
      if (claimed !== 'OK') return undefined;
    }
    return super.handleMessage(channel, buffer, pub, pattern);
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

  override createRetryStrategy(times: number): number | undefined {
    return reconnectDelayMs(times, this.isManuallyClosed);
  }

  override registerErrorListener(client: Redis): void {
    logConnectionErrors(client, `${this.namespace}:rpc-client`);
  }

  override registerReconnectListener(client: Redis): void {
    listenForReconnects(client, `${this.namespace}:rpc-client`, {
      closed: () => this.isManuallyClosed,
      connectedOnce: () => this.wasInitialConnectionSuccessful,
      whenReconnecting: () => {
        this.connectionPromise = Promise.reject(new Error('Connection lost. Trying to reconnect...'));
        this.connectionPromise.catch(() => undefined); // as Nest's: no unhandled rejection
        this._status$.next(RECONNECTING);
      },
    });
  }

  override async close(): Promise<void> {
    this.isManuallyClosed = true;
    this.handleClose();
    await closeTransport([this.pubClient, this.subClient]);
    this.pubClient = this.subClient = null;
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
