import type { DynamicModule } from '@nestjs/common';
import { WebhookApiModule } from '@tessera/webhook-api';
import type { FastifyRequest } from 'fastify';
import { AuthModule } from '../auth/auth.module';
import { PartnerAuthGuard } from '../auth/partner-auth.guard';
import type { PartnerContext } from '../products/products.service';

/**
 * PUT/GET /v1/webhooks and the delivery views under /v1/webhooks/…, served by webhook-dispatcher over RPC,
 * behind the partner credentials guard. The product is the webhook tenant.
 */
export const webhooksModule = (): DynamicModule =>
  WebhookApiModule.forRoot({
    source: 'verification',
    imports: [AuthModule],
    guards: [PartnerAuthGuard],
    tenant: (request: FastifyRequest) =>
      (request as FastifyRequest & { partner: PartnerContext }).partner.productId,
  });
