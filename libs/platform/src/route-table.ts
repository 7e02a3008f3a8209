import type { FastifyInstance } from 'fastify';

export interface RouteEntry {
  method: string;
  url: string;
}

const tables = new WeakMap<FastifyInstance, RouteEntry[]>();

/** Starts recording every route registered on `fastify` from now on (configureApp calls it before init). */
export function recordRoutes(fastify: FastifyInstance): void {
  const table: RouteEntry[] = [];
  tables.set(fastify, table);
  fastify.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) table.push({ method, url: route.url });
  });
}

/**
 * Every route of the app as registered: the fuzz suite reads it, so endpoints added later are fuzzed
 * without editing the suite.
 */
export function routeTable(fastify: FastifyInstance): RouteEntry[] {
  return [...(tables.get(fastify) ?? [])];
}
