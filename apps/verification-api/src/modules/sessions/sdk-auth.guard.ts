import { type CanActivate, createParamDecorator, type ExecutionContext, Injectable } from '@nestjs/common';
import type { SdkTokenClaims } from '@tessera/auth';
import { unauthorized } from '@tessera/platform';
import type { FastifyRequest } from 'fastify';
import { createHash } from 'node:crypto';
import { RateLimitService } from '../auth/rate-limit.service';
import { refusal, SessionContexts } from './session-contexts';
import { SessionsService } from './sessions.service';

type SdkRequest = FastifyRequest & { sdkSession?: SdkTokenClaims };

const BEARER = /^Bearer ([A-Za-z0-9._-]{1,2048})$/;

/**
 * Hosted SDK API (DECISIONS "Hosted SDK API"): every call but the link resolve carries
 * `Authorization: Bearer <token>`; a missing, forged or expired token gives 401 `{message}`, and so does a
 * token whose enrollment expired or was replaced (the applicant moved to another level) or was deactivated.
 * Calls are rate-limited per token (120/min) and per IP. The token is identified in Redis by a digest only.
 */
@Injectable()
export class SdkAuthGuard implements CanActivate {
  constructor(
    private readonly sessions: SessionsService,
    private readonly contexts: SessionContexts,
    private readonly rateLimits: RateLimitService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<SdkRequest>();
    const header = request.headers.authorization;
    const token = typeof header === 'string' ? BEARER.exec(header)?.[1] : undefined;
    const claims = token ? this.sessions.verifyToken(token) : undefined;
    const tokenId =
      claims && token ? createHash('sha256').update(token).digest('base64url').slice(0, 22) : undefined;
    await this.rateLimits.sdkCall(tokenId, request.ip);
    if (!claims) throw unauthorized('A valid SDK session token is required');
    // A signed token outlives neither its enrollment's expiry nor its replacement: uploads included. The
    // context read here is the one the handler takes first (SessionContexts): one round trip per call.
    if (refusal(await this.contexts.load(claims))) throw unauthorized('The session is no longer valid');
    request.sdkSession = claims;
    return true;
  }
}

/** The verified claims of the calling SDK session (set by SdkAuthGuard): enrollment, applicant, product. */
export const SdkSession = createParamDecorator(
  (_: unknown, context: ExecutionContext): SdkTokenClaims =>
    context.switchToHttp().getRequest<SdkRequest>().sdkSession as SdkTokenClaims,
);
