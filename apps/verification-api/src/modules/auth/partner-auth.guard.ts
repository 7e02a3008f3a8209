import { type CanActivate, createParamDecorator, type ExecutionContext, Injectable } from '@nestjs/common';
import { unauthorized } from '@tessera/platform';
import type { FastifyRequest } from 'fastify';
import { type PartnerContext, ProductsService } from '../products/products.service';
import { RateLimitService } from './rate-limit.service';

type PartnerRequest = FastifyRequest & { partner?: PartnerContext };

const header = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
};

/**
 * Contract "Authentication": X-Api-Key, X-Api-Secret and X-Environment are all required; a missing header,
 * a pair that does not match an active key, or an environment other than the key's gives 401.
 */
@Injectable()
export class PartnerAuthGuard implements CanActivate {
  constructor(
    private readonly products: ProductsService,
    private readonly rateLimits: RateLimitService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<PartnerRequest>();
    const apiKey = header(request, 'x-api-key');
    const apiSecret = header(request, 'x-api-secret');
    const environment = header(request, 'x-environment');
    const partner =
      apiKey && apiSecret && environment
        ? await this.products.authenticate(apiKey, apiSecret, environment)
        : undefined;
    if (!partner) {
      await this.rateLimits.authFailure(request.ip, 'partner');
      throw unauthorized(
        apiKey && apiSecret && environment
          ? 'Invalid credentials'
          : 'X-Api-Key, X-Api-Secret and X-Environment headers are required',
      );
    }
    await this.rateLimits.credential(partner.apiKey);
    request.partner = partner;
    return true;
  }
}

/** The authenticated caller of a partner route (set by PartnerAuthGuard). */
export const Partner = createParamDecorator(
  (_: unknown, context: ExecutionContext): PartnerContext =>
    context.switchToHttp().getRequest<PartnerRequest>().partner as PartnerContext,
);
