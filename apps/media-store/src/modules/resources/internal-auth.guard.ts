import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { safeEqual } from '@tessera/auth';
import { APP_CONFIG, unauthorized } from '@tessera/platform';
import type { FastifyRequest } from 'fastify';
import type { Env } from '../../config/env';

/** Internal HTTP API: `Authorization: Bearer $INTERNAL_SERVICE_TOKEN`, compared in constant time; 401 otherwise. */
@Injectable()
export class InternalAuthGuard implements CanActivate {
  constructor(@Inject(APP_CONFIG) private readonly env: Env) {}

  canActivate(context: ExecutionContext): boolean {
    const header = context.switchToHttp().getRequest<FastifyRequest>().headers.authorization;
    const token = typeof header === 'string' && header.startsWith('Bearer ') ? header.slice(7) : '';
    if (!safeEqual(token, this.env.INTERNAL_SERVICE_TOKEN))
      throw unauthorized('A valid internal service token is required');
    return true;
  }
}
