import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { safeEqual } from '@tessera/auth';
import { APP_CONFIG, notFound, ROUTE_NOT_FOUND, unauthorized } from '@tessera/platform';
import type { FastifyRequest } from 'fastify';
import type { Env } from '../../config/env';
import { RateLimitService } from './rate-limit.service';

/** Operator API: `Authorization: Bearer $ADMIN_TOKEN`; with ADMIN_TOKEN unset the whole API answers 404. */
@Injectable()
export class AdminAuthGuard implements CanActivate {
  constructor(
    @Inject(APP_CONFIG) private readonly env: Env,
    private readonly rateLimits: RateLimitService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const expected = this.env.ADMIN_TOKEN;
    if (!expected) throw notFound(ROUTE_NOT_FOUND);
    const value = request.headers.authorization;
    const token = typeof value === 'string' && value.startsWith('Bearer ') ? value.slice(7) : '';
    if (!safeEqual(token, expected)) {
      await this.rateLimits.authFailure(request.ip, 'operator');
      throw unauthorized('Invalid operator token');
    }
    return true;
  }
}
