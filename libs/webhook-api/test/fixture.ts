import { createServer, type Server } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type CanActivate,
  type DynamicModule,
  type ExecutionContext,
  Injectable,
  Module,
  UnauthorizedException,
} from '@nestjs/common';
import { baseEnvSchema, loadConfig, PlatformModule } from '@tessera/platform';
import { makeCertificate } from '@tessera/testing';
import type { FastifyRequest } from 'fastify';
import { WebhookApiModule } from '../src';

type TenantRequest = FastifyRequest & { tenantId?: string };

/** Fixture guard: the tenant is the X-Tenant header; without it, 401. The real guards come from each API. */
@Injectable()
export class HeaderTenantGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<TenantRequest>();
    const tenant = req.headers['x-tenant'];
    if (typeof tenant !== 'string' || !tenant) throw new UnauthorizedException('Missing tenant');
    req.tenantId = tenant;
    return true;
  }
}

/** A minimal API app mounting the webhook endpoints of one source. */
@Module({})
export class FixtureApiModule {
  static forRoot(envVars: Record<string, string>, source: 'custody' | 'verification'): DynamicModule {
    const env = loadConfig(baseEnvSchema, envVars);
    return {
      module: FixtureApiModule,
      imports: [
        PlatformModule.forRoot({
          service: `fixture-${source}-api`,
          env,
          errorShape: source,
          database: { schema: 'fixture_api', entities: [], migrations: [] },
        }),
        WebhookApiModule.forRoot({
          source,
          guards: [HeaderTenantGuard],
          tenant: (req) => (req as TenantRequest).tenantId!,
        }),
      ],
    };
  }
}

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
}

/** An HTTPS receiver on loopback with a self-signed certificate made by openssl at test time. */
export async function startReceiver(): Promise<{
  url: (path: string) => string;
  caFile: string;
  requests: Received[];
  status: Map<string, number>;
  stop: () => Promise<void>;
}> {
  const { key, cert, certFile } = makeCertificate();
  const requests: Received[] = [];
  const status = new Map<string, number>();
  const server: Server = createServer({ key, cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({
        path: req.url ?? '/',
        headers: req.headers,
        rawBody: Buffer.concat(chunks).toString('utf8'),
      });
      res.writeHead(status.get(req.url ?? '/') ?? 200);
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (path) => `https://127.0.0.1:${port}${path}`,
    caFile: certFile,
    requests,
    status,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
