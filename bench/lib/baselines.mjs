// Same-run baselines on the bench's own Postgres and Redis: the bare Fastify write and read, beside which every
// HTTP figure is set.
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { measure } from './load.mjs';
import { startServer } from './proc.mjs';

const here = dirname(fileURLToPath(import.meta.url));

export function startBaselineServer(databaseUrl, { pool = 20, dir } = {}) {
  return startServer('baseline', join(here, 'baseline-server.mjs'), {
    env: { DATABASE_URL: databaseUrl, BASELINE_POOL: String(pool), ...(dir ? { BENCH_DIR: dir } : {}) },
  });
}

/** The write baseline: one INSERT … RETURNING of a JSON body per POST. */
export function measureInsert(server, { connections, duration, body = () => ({}) }, measureOpts) {
  return measure(
    'baseline INSERT',
    server,
    {
      url: `${server.url}/insert`,
      connections,
      duration,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      requests: [
        {
          setupRequest: (req) => ({
            ...req,
            body: JSON.stringify({ externalUserId: `b-${randomUUID()}`, ...body() }),
          }),
        },
      ],
    },
    measureOpts,
  );
}

/** The read baseline: a primary-key SELECT of one row inserted beforehand. */
export async function measureGet(server, { connections, duration }, measureOpts) {
  const res = await fetch(`${server.url}/insert`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ externalUserId: `get-${randomUUID()}`, firstName: 'Bench' }),
  });
  const { id } = await res.json();
  return measure(
    'baseline GET',
    server,
    { url: `${server.url}/row/${id}`, connections, duration, method: 'GET' },
    measureOpts,
  );
}
