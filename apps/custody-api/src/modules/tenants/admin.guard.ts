import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { clientIp, IpAllowList, RateLimiter, safeEqual } from '@tessera/auth';
import {
  notFound,
  REQUEST_REDIS,
  RedisKeys,
  TooManyRequestsException,
  unauthorized,
} from '@tessera/platform';
import type { FastifyRequest } from 'fastify';
import type Redis from 'ioredis';
import { InjectEnv } from '../../common/config';
import type { Env } from '../../config/env';

/**
 * Operator API: `Authorization: Bearer $ADMIN_TOKEN`; with ADMIN_TOKEN unset it does not exist (404).
 * A wrong token counts against the client IP in the operator's own failed-authentication bucket (separate
 * from the signed API's): past CUSTODY_AUTH_FAILURES_PER_IP a minute the answer is 429.
 */
@Injectable()
export class AdminGuard implements CanActivate {
  private readonly limiter: RateLimiter;
  private readonly proxies: IpAllowList;

  constructor(
    @InjectEnv() private readonly env: Env,
    @Inject(REQUEST_REDIS) redis: Redis,
    keys: RedisKeys,
  ) {
    this.limiter = new RateLimiter(redis, keys.key('custody'));
    this.proxies = new IpAllowList(env.TRUSTED_PROXIES);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (!this.env.ADMIN_TOKEN) throw notFound('Not found');
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const header = request.headers.authorization;
    const token = /^Bearer (.+)$/.exec(typeof header === 'string' ? header : '')?.[1];
    if (!token || !safeEqual(token, this.env.ADMIN_TOKEN)) {
      const ip = clientIp(request.socket?.remoteAddress, request.headers['x-forwarded-for'], this.proxies);
      const result = await this.limiter.consume(`authfail:operator:${ip ?? 'unknown'}`, {
        limit: this.env.CUSTODY_AUTH_FAILURES_PER_IP,
        windowSeconds: 60,
        segments: 4,
      });
      if (!result.allowed) throw new TooManyRequestsException(result.retryAfterSeconds);
      throw unauthorized('Invalid operator token');
    }
    return true;
  }
}
