import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  ackSecretRequest,
  deliveryRequest,
  listDeliveriesRequest,
  putEndpointRequest,
  type RpcError,
  scopeRequest,
  WEBHOOK_RPC,
} from '@tessera/contracts';
import { normalizeError } from '@tessera/platform';
import { DeliveriesService } from '../deliveries/deliveries.service';
import { EndpointsService } from '../endpoints/endpoints.service';

type Reply<T> = { ok: true; result: T } | { ok: false; error: RpcError };

/** Runs a handler and turns its domain errors into a reply the calling API maps to HTTP. */
async function reply<T>(fn: () => Promise<T> | T): Promise<Reply<T>> {
  try {
    return { ok: true, result: await fn() };
  } catch (err) {
    const n = normalizeError(err);
    if (n.status >= 500) throw err;
    return {
      ok: false,
      error: { status: n.status, message: n.message, ...(n.errors ? { errors: n.errors } : {}) },
    };
  }
}

/** The partner-facing webhook endpoints of both APIs, served over Redis RPC. */
@Controller()
export class PartnerController {
  constructor(
    private readonly endpoints: EndpointsService,
    private readonly deliveries: DeliveriesService,
  ) {}

  @MessagePattern(WEBHOOK_RPC.PUT_ENDPOINT)
  put(@Payload() data: unknown) {
    return reply(() => {
      const req = putEndpointRequest.parse(data);
      return this.endpoints.put(req.tenantId, req.source, req.body, req.putId ?? null);
    });
  }

  @MessagePattern(WEBHOOK_RPC.ACK_SECRET)
  acknowledge(@Payload() data: unknown) {
    return reply(() => {
      const req = ackSecretRequest.parse(data);
      return this.endpoints.acknowledge(req.tenantId, req.source, req.putId);
    });
  }

  @MessagePattern(WEBHOOK_RPC.GET_ENDPOINT)
  get(@Payload() data: unknown) {
    return reply(() => {
      const req = scopeRequest.parse(data);
      return this.endpoints.get(req.tenantId, req.source);
    });
  }

  @MessagePattern(WEBHOOK_RPC.SEND_TEST)
  test(@Payload() data: unknown) {
    return reply(() => {
      const req = scopeRequest.parse(data);
      return this.deliveries.sendTest(req.tenantId, req.source);
    });
  }

  @MessagePattern(WEBHOOK_RPC.CATALOG)
  catalog(@Payload() data: unknown) {
    return reply(() => this.endpoints.catalog(scopeRequest.parse(data).source));
  }

  @MessagePattern(WEBHOOK_RPC.LIST_DELIVERIES)
  list(@Payload() data: unknown) {
    return reply(() => {
      const req = listDeliveriesRequest.parse(data);
      return this.deliveries.list(req.tenantId, req.source, req.query);
    });
  }

  @MessagePattern(WEBHOOK_RPC.GET_DELIVERY)
  detail(@Payload() data: unknown) {
    return reply(() => {
      const req = deliveryRequest.parse(data);
      return this.deliveries.get(req.tenantId, req.source, req.id);
    });
  }

  @MessagePattern(WEBHOOK_RPC.RETRY_DELIVERY)
  retry(@Payload() data: unknown) {
    return reply(() => {
      const req = deliveryRequest.parse(data);
      return this.deliveries.retry(req.tenantId, req.source, req.id);
    });
  }
}
