import type { DynamicModule, INestApplication, Type } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { configureApp, createFastifyAdapter } from '@tessera/platform';

export interface BootOptions {
  /** Start the Redis RPC server (default true). */
  rpc?: boolean;
  /** Also listen on a loopback port (for clients that need a real socket, e.g. autocannon). */
  listen?: boolean;
  trustProxy?: boolean | string | string[];
  /**
   * Providers built by a factory of the test's instead (say, the queue connection `REDIS` through a test proxy,
   * to hang that connection alone; decision 0491).
   */
  overrides?: { provide: unknown; useFactory: () => unknown }[];
}

/** Boots an app module exactly as main.ts does, on Fastify, through createNestApplication(). */
export async function bootApp(
  module: Type<unknown> | DynamicModule,
  opts: BootOptions = {},
): Promise<NestFastifyApplication> {
  const builder = Test.createTestingModule({ imports: [module] });
  for (const o of opts.overrides ?? []) {
    builder.overrideProvider(o.provide as string | symbol).useFactory({ factory: o.useFactory });
  }
  const moduleRef = await builder.compile();
  const app = moduleRef.createNestApplication<NestFastifyApplication>(
    createFastifyAdapter({ trustProxy: opts.trustProxy }),
    {
      rawBody: true,
      bufferLogs: false,
    },
  );
  try {
    await configureApp(app, { rpc: opts.rpc });
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
    if (opts.listen) await app.listen(0, '127.0.0.1');
    return app;
  } catch (err) {
    // A boot that fails half-way (e.g. the job processor check) must not leave connections open.
    await app.close().catch(() => undefined);
    throw err;
  }
}

export async function closeApp(app: INestApplication | undefined): Promise<void> {
  if (app) await app.close();
}
