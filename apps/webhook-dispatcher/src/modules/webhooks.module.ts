import { readFileSync } from 'node:fs';
import { createSecureContext, rootCertificates } from 'node:tls';
import { type DynamicModule, Logger, Module } from '@nestjs/common';
import { APP_CONFIG } from '@tessera/platform';
import type { Env } from '../config/env';
import { DeliveriesPoller } from './deliveries/deliveries.poller';
import { DeliveriesRepository } from './deliveries/deliveries.repository';
import { DeliveriesService } from './deliveries/deliveries.service';
import { dnsResolver, EgressGuard, type HostResolver, parseCidrList } from './deliveries/egress-guard';
import { WebhookMetrics } from './deliveries/webhook-metrics';
import { EndpointsRepository } from './endpoints/endpoints.repository';
import { EndpointsService } from './endpoints/endpoints.service';
import { EventsProcessor } from './events/events.processor';
import { InboxRetention } from './events/inbox-retention';
import { DeliveryRetention } from './deliveries/delivery-retention';
import { PartnerController } from './partner/partner.controller';

export interface WebhooksModuleOptions {
  /** DNS for the egress check; tests inject a fake one (rebinding, fixed test hosts). */
  resolver?: HostResolver;
}

/** Endpoints, the webhook.events consumer, deliveries with retries, and the partner RPC handlers. */
@Module({})
export class WebhooksModule {
  static forRoot(opts: WebhooksModuleOptions = {}): DynamicModule {
    return {
      module: WebhooksModule,
      controllers: [PartnerController],
      providers: [
        {
          provide: EgressGuard,
          inject: [APP_CONFIG],
          useFactory: (env: Env) => {
            const logger = new Logger('WebhookEgress');
            if (env.WEBHOOK_ALLOW_PRIVATE_TARGETS) {
              logger.warn(
                `WEBHOOK_ALLOW_PRIVATE_TARGETS is set (${env.WEBHOOK_ALLOW_PRIVATE_TARGETS}): private webhook targets are allowed. Development and tests only.`,
              );
            }
            return new EgressGuard(
              opts.resolver ?? dnsResolver(),
              parseCidrList(env.WEBHOOK_ALLOW_PRIVATE_TARGETS),
            );
          },
        },
        {
          provide: 'WEBHOOK_CA',
          inject: [APP_CONFIG],
          useFactory: (env: Env) => {
            if (!env.WEBHOOK_CA_FILE) return undefined;
            new Logger('WebhookEgress').warn(
              `WEBHOOK_CA_FILE is set (${env.WEBHOOK_CA_FILE}): receivers' certificates are verified against it as well as the public roots. Development and tests only.`,
            );
            // Added to Node's public roots, so a local receiver and real partner endpoints both verify. One
            // secure context, parsed once: every TLS connection reuses it.
            return createSecureContext({
              ca: [...rootCertificates, readFileSync(env.WEBHOOK_CA_FILE, 'utf8')],
            });
          },
        },
        EndpointsRepository,
        EndpointsService,
        DeliveriesRepository,
        DeliveriesService,
        DeliveriesPoller,
        WebhookMetrics,
        EventsProcessor,
        InboxRetention,
        DeliveryRetention,
      ],
    };
  }
}
