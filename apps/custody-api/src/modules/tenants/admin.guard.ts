import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { safeEqual } from '@tessera/auth';
import { notFound, unauthorized } from '@tessera/platform';
import { InjectEnv } from '../../common/config';
import type { Env } from '../../config/env';

/** Operator API: `Authorization: Bearer $ADMIN_TOKEN`; with ADMIN_TOKEN unset it does not exist (404). */
@Injectable()
export class AdminGuard implements CanActivate {
  constructor(@InjectEnv() private readonly env: Env) {}

  canActivate(context: ExecutionContext): boolean {
    if (!this.env.ADMIN_TOKEN) throw notFound('Not found');
    const header = context.switchToHttp().getRequest<{ headers: Record<string, string> }>()
      .headers.authorization;
    const token = /^Bearer (.+)$/.exec(header ?? '')?.[1];
    if (!token || !safeEqual(token, this.env.ADMIN_TOKEN)) throw unauthorized('Invalid operator token');
    return true;
  }
}
