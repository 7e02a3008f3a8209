import { createParamDecorator, type ExecutionContext, SetMetadata } from '@nestjs/common';

export type Environment = 'sandbox' | 'production';

/** Who made a verified signed request. Test keys reach only sandbox data, live keys only production data. */
export interface Caller {
  tenantId: string;
  apiKey: string;
  environment: Environment;
  scopes: string[];
}

export const SCOPE_METADATA = 'custody:scope';
export const ACCESS_METADATA = 'custody:access';

/** The scope a signed request's key must carry to reach this handler. */
export const RequireScope = (scope: string) => SetMetadata(SCOPE_METADATA, scope);

/**
 * How a controller is reached: `anonymous` (per-IP limit, no signature: /health, /swagger),
 * `operator` (ADMIN_TOKEN bearer), `internal` (no custody checks: /metrics). Default: signed.
 */
export const Access = (mode: 'anonymous' | 'operator' | 'internal') => SetMetadata(ACCESS_METADATA, mode);

export const CurrentCaller = createParamDecorator((_: unknown, ctx: ExecutionContext): Caller => {
  const request = ctx.switchToHttp().getRequest<{ custodyCaller?: Caller }>();
  if (!request.custodyCaller) throw new Error('No verified caller on this request');
  return request.custodyCaller;
});
