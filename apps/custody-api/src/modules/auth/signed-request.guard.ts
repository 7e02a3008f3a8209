import {
  type CanActivate,
  type ExecutionContext,
  Inject,
  Injectable,
  type OnModuleDestroy,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import {
  clientIp,
  IpAllowList,
  parseRequestTimestamp,
  PermitLeases,
  RateLimiter,
  ReplayCache,
  SIGNATURE_HEADERS,
  timestampWithinDrift,
} from '@tessera/auth';
import {
  forbidden,
  HealthController,
  MetricsController,
  notJson,
  REQUEST_REDIS,
  RedisKeys,
  TooManyRequestsException,
  unauthorized,
  withTimeout,
} from '@tessera/platform';
import type { FastifyRequest } from 'fastify';
import type Redis from 'ioredis';
import { ACCESS_METADATA, type Caller, SCOPE_METADATA } from '../../common/caller';
import { InjectEnv } from '../../common/config';
import type { Env } from '../../config/env';
import { TenantsService } from '../tenants/tenants.service';
import { INVALID_KEY_OR_SIGNATURE, signatureChecks } from './credential-check';
import { carriesNonJsonBody } from './json-body';

const WINDOW = { windowSeconds: 60, segments: 4 };
const DRIFT_SECONDS = 30;
const REPLAY_TTL_SECONDS = 60;
const ANONYMOUS_LIMIT_TIMEOUT_MS = 300;

type CustodyRequest = FastifyRequest & { custodyCaller?: Caller; rawBody?: Buffer };

/**
 * Global guard. Signed requests: key, drift, signature, replay, IP allow-list, per-key rate limit, scope.
 * Anonymous routes (/health, /swagger): per-IP rate limit only. Operator and internal routes pass through
 * to their own guards.
 *
 * A busy key is admitted from rate-limit permits its replica took ahead (`PermitLeases`, decisions 0428 and
 * 0429): never more than the limit across replicas; a replica may be refused for at most 50 ms while another
 * holds unused permits (at most 1 % of the limit each).
 */
@Injectable()
export class SignedRequestGuard implements CanActivate, OnModuleDestroy {
  private readonly limiter: RateLimiter;
  private readonly keyLeases: PermitLeases;
  private readonly replay: ReplayCache;
  private readonly proxies: IpAllowList;

  constructor(
    private readonly reflector: Reflector,
    private readonly tenants: TenantsService,
    @Inject(REQUEST_REDIS) redis: Redis,
    keys: RedisKeys,
    @InjectEnv() private readonly env: Env,
  ) {
    this.limiter = new RateLimiter(redis, keys.key('custody'));
    this.keyLeases = new PermitLeases(this.limiter, { limit: env.CUSTODY_RATE_LIMIT_PER_KEY, ...WINDOW });
    this.replay = new ReplayCache(redis, keys.key('custody'), REPLAY_TTL_SECONDS);
    this.proxies = new IpAllowList(env.TRUSTED_PROXIES);
  }

  private access(context: ExecutionContext): string {
    const cls = context.getClass();
    if (cls === HealthController) return 'anonymous';
    if (cls === MetricsController) return 'internal';
    return this.reflector.getAllAndOverride<string>(ACCESS_METADATA, [context.getHandler(), cls]) ?? 'signed';
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const access = this.access(context);
    if (access === 'internal' || access === 'operator') return true;
    const request = context.switchToHttp().getRequest<CustodyRequest>();
    const ip = clientIp(request.socket?.remoteAddress, request.headers['x-forwarded-for'], this.proxies);
    if (access === 'anonymous') {
      // /health must still answer (503) while Redis is down: the anonymous limit fails open.
      try {
        await withTimeout(
          this.limit(`ip:${ip ?? 'unknown'}`, this.env.CUSTODY_RATE_LIMIT_PER_IP),
          ANONYMOUS_LIMIT_TIMEOUT_MS,
          'anonymous rate limit',
        );
      } catch (err) {
        if (err instanceof TooManyRequestsException) throw err;
      }
      return true;
    }
    // Before the signature: a body that is not JSON keeps no raw bytes to verify, or would be read as fields.
    if (carriesNonJsonBody(request.headers)) throw notJson();
    request.custodyCaller = await this.verify(request, ip);
    const scope = this.reflector.getAllAndOverride<string | undefined>(SCOPE_METADATA, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (scope && !request.custodyCaller.scopes.includes(scope)) {
      throw forbidden(`This API key lacks the scope ${scope}`);
    }
    return true;
  }

  private async verify(request: CustodyRequest, ip: string | undefined): Promise<Caller> {
    const header = (name: string) => {
      const value = request.headers[name];
      return Array.isArray(value) ? value[0] : value;
    };
    const apiKey = header(SIGNATURE_HEADERS.apiKey);
    const timestamp = header(SIGNATURE_HEADERS.timestamp);
    const signature = header(SIGNATURE_HEADERS.signature);
    if (!apiKey || !timestamp || !signature) {
      throw unauthorized('X-API-Key, X-Timestamp and X-Signature are required');
    }
    const timestampMs = parseRequestTimestamp(timestamp);
    if (timestampMs === undefined) throw unauthorized('X-Timestamp must be Unix seconds or milliseconds');
    if (!timestampWithinDrift(timestampMs, Date.now(), DRIFT_SECONDS)) {
      throw unauthorized(`X-Timestamp is more than ${DRIFT_SECONDS} seconds from server time`);
    }
    // Unknown key and wrong signature: one message, one code path, one cost (docs/decisions/0013).
    const key = await this.tenants.activeKey(apiKey);
    const valid = signatureChecks(
      key?.secret,
      { timestamp, method: request.method, pathWithQuery: request.url, body: request.rawBody ?? '' },
      signature.toLowerCase(),
    );
    if (!key || !valid) {
      await this.authFailure(ip);
      throw unauthorized(INVALID_KEY_OR_SIGNATURE);
    }
    if (!key.allowList.allows(ip)) throw forbidden('Client IP address is not in the API key allow-list');
    // The replay claim and, unless a permit is held ahead, the limit's take: one round trip (auto-pipelining).
    // A replay answers 401 before a 429.
    const [fresh, retryAfterSeconds] = await Promise.all([
      this.replay.claim(key.apiKey, timestamp, signature.toLowerCase()),
      this.keyLimit(`key:${key.apiKey}`),
    ]);
    if (!fresh)
      throw unauthorized('This signature has already been used; sign the retry with a new timestamp');
    if (retryAfterSeconds > 0) throw new TooManyRequestsException(retryAfterSeconds);
    return {
      tenantId: key.tenantId,
      apiKey: key.apiKey,
      environment: key.environment === 'test' ? 'sandbox' : 'production',
      scopes: key.scopes,
    };
  }

  /** Counts one request of the key: 0 when admitted, else the Retry-After in seconds. */
  private async keyLimit(bucket: string): Promise<number> {
    if (this.keyLeases.tryLocal(bucket)) return 0;
    const take = await this.keyLeases.take(bucket, 1);
    return take.admitted === 1 ? 0 : take.retryAfterSeconds;
  }

  /** Permits held ahead go back, so other replicas can use them at once. */
  async onModuleDestroy(): Promise<void> {
    await this.keyLeases.close();
  }

  /**
   * Failed authentications count per client IP in a bucket of the signed API's own (the operator API has
   * another); past the limit the answer is 429 instead of 401.
   */
  private async authFailure(ip: string | undefined): Promise<void> {
    await this.limit(`authfail:signed:${ip ?? 'unknown'}`, this.env.CUSTODY_AUTH_FAILURES_PER_IP);
  }

  private async limit(bucket: string, limit: number): Promise<void> {
    const result = await this.limiter.consume(bucket, { limit, ...WINDOW });
    if (!result.allowed) throw new TooManyRequestsException(result.retryAfterSeconds);
  }
}
