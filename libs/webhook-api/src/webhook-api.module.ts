import {
  Body,
  type CanActivate,
  Controller,
  type DynamicModule,
  Get,
  HttpCode,
  Inject,
  Module,
  Param,
  Post,
  Put,
  Query,
  Req,
  type ModuleMetadata,
  type Type,
  UseGuards,
  applyDecorators,
} from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import {
  ackSecretReply,
  catalogReply,
  deliveryDetail,
  deliveryPage,
  listDeliveriesQuery,
  putEndpointBody,
  rpcResult,
  testDeliveryReply,
  WEBHOOK_RPC,
  webhookConfiguration,
  type WebhookSource,
  type RpcError,
} from '@tessera/contracts';
import { AppException, refuseNonDecimalNumbers, RpcClient } from '@tessera/platform';
import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';

/** Resolves the authenticated tenant of a request (set by the app's own auth guard). */
export type TenantResolver = (request: FastifyRequest) => string | Promise<string>;

export interface WebhookApiOptions {
  /** Which API mounts the endpoints: custody paths (/webhooks/...) or verification paths (/v1/webhooks...). */
  source: WebhookSource;
  /** The app's authentication guard(s), applied to every route. */
  guards: (Type<CanActivate> | CanActivate)[];
  tenant: TenantResolver;
  /** Extra decorators per access kind, e.g. the app's scope metadata (`webhooks:read` / `webhooks:write`). */
  read?: MethodDecorator[];
  write?: MethodDecorator[];
  /** Modules the guards need (e.g. the app's auth module). */
  imports?: ModuleMetadata['imports'];
  /** RPC timeout towards webhook-dispatcher (default 10 s: a test delivery may wait for a 5 s attempt). */
  timeoutMs?: number;
}

export const WEBHOOK_API_OPTIONS = Symbol('WEBHOOK_API_OPTIONS');

/** Route paths of each API, relative to the app root. */
export const WEBHOOK_PATHS = {
  custody: {
    config: 'webhooks/outbound',
    test: 'webhooks/outbound/test',
    catalog: 'webhooks/events/catalog',
    deliveries: 'webhooks/deliveries',
  },
  verification: {
    config: 'v1/webhooks',
    test: 'v1/webhooks/test',
    catalog: 'v1/webhooks/events/catalog',
    deliveries: 'v1/webhooks/deliveries',
  },
} as const;

/** Calls webhook-dispatcher and turns its error replies into the app's HTTP errors. */
export class WebhookApiClient {
  constructor(
    private readonly rpc: RpcClient,
    private readonly options: WebhookApiOptions,
  ) {}

  async call<S extends z.ZodType>(pattern: string, data: object, schema: S): Promise<z.infer<S>> {
    let reply: { ok: true; result: unknown } | { ok: false; error: RpcError };
    try {
      reply = (await this.rpc.send(
        pattern,
        { source: this.options.source, ...data },
        rpcResult(schema),
        this.options.timeoutMs ?? 10_000,
      )) as typeof reply;
    } catch {
      throw new AppException(502, 'Webhook service unavailable');
    }
    if (!reply.ok) {
      const { status, message, errors } = reply.error;
      // Verification's error shape is `{message}` alone, reporting the first problem found (its contract):
      // its filter drops `errors`, which carry what the problem is ("Invalid webhook URL" does not say which
      // rule). The first field and reason become the message, as the API's own refusals write them
      // ("url: must be a string"); custody keeps both members (decision 0490).
      if (this.options.source === 'verification' && errors && Object.keys(errors).length > 0)
        throw new AppException(status, firstProblem(errors), errors);
      throw new AppException(status, message, errors);
    }
    return reply.result as z.infer<S>;
  }
}

/** `field: reason` of the first problem the dispatcher named. */
function firstProblem(errors: Record<string, string[]>): string {
  const [field, reasons] = Object.entries(errors)[0]!;
  return `${field}: ${reasons[0] ?? 'is not valid'}`;
}

function controllerFor(options: WebhookApiOptions): Type<unknown> {
  const paths = WEBHOOK_PATHS[options.source];
  const read = applyDecorators(...(options.read ?? []));
  const write = applyDecorators(...(options.write ?? []));

  @Controller()
  @UseGuards(...options.guards)
  class WebhookApiController {
    constructor(@Inject(WebhookApiClient) private readonly client: WebhookApiClient) {}

    private tenant(req: FastifyRequest): Promise<string> {
      return Promise.resolve(options.tenant(req));
    }

    /**
     * A secret the dispatcher generated is acknowledged before it is returned (decision 0448): until then a
     * repeat PUT with the same URL rotates it again, so a reply lost between the dispatcher and here (a timeout,
     * this process dying) leaves the partner a way to get a secret without changing the URL.
     */
    @Put(paths.config)
    @write
    async put(@Req() req: FastifyRequest, @Body() body: unknown) {
      const parsed = putEndpointBody.parse(body ?? {});
      const tenantId = await this.tenant(req);
      const putId = randomUUID();
      const config = await this.client.call(
        WEBHOOK_RPC.PUT_ENDPOINT,
        { tenantId, body: parsed, putId },
        webhookConfiguration,
      );
      if (config.signingSecret === null) return config;
      let acknowledged: boolean;
      try {
        ({ acknowledged } = await this.client.call(
          WEBHOOK_RPC.ACK_SECRET,
          { tenantId, putId },
          ackSecretReply,
        ));
      } catch {
        // Unknown whether the acknowledgement was written: the secret is returned all the same. If it was not,
        // a repeat PUT hands out a new one, which is a rotation the partner sees, never a secret it lost.
        return config;
      }
      // A concurrent PUT replaced this one's secret before it was handed over: it signs nothing.
      if (!acknowledged)
        throw new AppException(
          409,
          'The webhook configuration was changed by another request; repeat the PUT',
        );
      return config;
    }

    @Get(paths.config)
    @read
    async get(@Req() req: FastifyRequest) {
      return this.client.call(
        WEBHOOK_RPC.GET_ENDPOINT,
        { tenantId: await this.tenant(req) },
        webhookConfiguration,
      );
    }

    @Post(paths.test)
    @HttpCode(200)
    @write
    async test(@Req() req: FastifyRequest) {
      return this.client.call(WEBHOOK_RPC.SEND_TEST, { tenantId: await this.tenant(req) }, testDeliveryReply);
    }

    @Get(paths.catalog)
    @read
    async catalog(@Req() req: FastifyRequest) {
      return this.client.call(WEBHOOK_RPC.CATALOG, { tenantId: await this.tenant(req) }, catalogReply);
    }

    @Get(paths.deliveries)
    @read
    async list(@Req() req: FastifyRequest, @Query() query: unknown) {
      const parsed = listDeliveriesQuery.parse(refuseNonDecimalNumbers(query ?? {}, ['pageSize']));
      return this.client.call(
        WEBHOOK_RPC.LIST_DELIVERIES,
        { tenantId: await this.tenant(req), query: parsed },
        deliveryPage,
      );
    }

    @Get(`${paths.deliveries}/:id`)
    @read
    async detail(@Req() req: FastifyRequest, @Param('id') id: string) {
      return this.client.call(
        WEBHOOK_RPC.GET_DELIVERY,
        { tenantId: await this.tenant(req), id },
        deliveryDetail,
      );
    }

    @Post(`${paths.deliveries}/:id/retry`)
    @HttpCode(200)
    @write
    async retry(@Req() req: FastifyRequest, @Param('id') id: string) {
      return this.client.call(
        WEBHOOK_RPC.RETRY_DELIVERY,
        { tenantId: await this.tenant(req), id },
        deliveryDetail,
      );
    }
  }
  Object.defineProperty(WebhookApiController, 'name', {
    value: `${options.source[0]!.toUpperCase()}${options.source.slice(1)}WebhookApiController`,
  });
  return WebhookApiController;
}

/**
 * The partner webhook endpoints of one API. The app mounts it with its own guard and tenant resolver;
 * every call goes to webhook-dispatcher over Redis RPC (RpcClient from PlatformModule).
 */
@Module({})
export class WebhookApiModule {
  static forRoot(options: WebhookApiOptions): DynamicModule {
    return {
      module: WebhookApiModule,
      imports: options.imports ?? [],
      controllers: [controllerFor(options)],
      providers: [
        { provide: WEBHOOK_API_OPTIONS, useValue: options },
        {
          provide: WebhookApiClient,
          inject: [RpcClient],
          useFactory: (rpc: RpcClient) => new WebhookApiClient(rpc, options),
        },
      ],
    };
  }
}
