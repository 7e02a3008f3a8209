import type { DynamicModule } from '@nestjs/common';
import { WebhookApiModule } from '@tessera/webhook-api';
import type { FastifyRequest } from 'fastify';
import { type Caller, RequireScope } from '../../common/caller';

/**
 * The custody webhook endpoints (/webhooks/outbound, /webhooks/events/catalog, /webhooks/deliveries…),
 * served by webhook-dispatcher over RPC. The global signed-request guard authenticates; scopes per DECISIONS.
 */
export const webhooksModule = (): DynamicModule =>
  WebhookApiModule.forRoot({
    source: 'custody',
    guards: [],
    tenant: (request: FastifyRequest) =>
      (request as FastifyRequest & { custodyCaller: Caller }).custodyCaller.tenantId,
    read: [RequireScope('webhooks:read')],
    write: [RequireScope('webhooks:write')],
  });
