#!/usr/bin/env node
// Bench "applicants": POST /v1/applicants and GET /v1/applicants/{id}/status of verification-api at each
// connection count of the scale curve, beside the bare Fastify single INSERT … RETURNING (create) and the bare
// Fastify primary-key GET (status), measured in the same run on the same Postgres; then the same two figures
// with 1 million applicants preloaded (bench/seed-scale.mjs) in a second deployment, measured in alternating
// slices with the same figure on the empty tables.
//
//   pnpm build && node bench/applicants.mjs [--duration 5] [--connections 10,50,200] [--no-preload]
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { standalone } from './lib/bench.mjs';
import { startBaselineServer, measureInsert, measureGet } from './lib/baselines.mjs';
import { interleaved, measure } from './lib/load.mjs';
import { requireFrom, root, startServer } from './lib/proc.mjs';
import { benchProduct } from './lib/verification-product.mjs';
import { against, figure, progress, rowsLabel } from './lib/report.mjs';
import { explainHotPaths, seed } from './seed-scale.mjs';

const appRequire = requireFrom('apps/verification-api');
const POOL = 20;

const body = (externalUserId) =>
  JSON.stringify({ externalUserId, firstName: 'Bench', lastName: 'User', email: 'b@x.test' });

export const bench = {
  name: 'applicants',
  description: 'verification-api create and status vs bare Fastify INSERT and GET',
  async run(ctx) {
    const figures = [];
    const empty = await deployment('empty');
    let scale = null;
    let baseline = null;
    try {
      const { api } = empty;
      baseline = await startBaselineServer(empty.env.DATABASE_URL, { pool: POOL });
      // Each figure and its baseline in alternating slices (load.mjs interleaved).
      const paired = (c, sideA, sideB) =>
        interleaved(
          [
            { label: sideA.label, connections: c, run: (s, o) => sideA.run(c, s, o) },
            { label: sideB.label, connections: c, run: (s, o) => sideB.run(c, s, o) },
          ],
          ctx.duration,
        );
      const insert = {
        label: 'baseline INSERT',
        run: (c, s, o) => measureInsert(baseline, { connections: c, duration: s }, o),
      };
      const get = {
        label: 'baseline GET',
        run: (c, s, o) => measureGet(baseline, { connections: c, duration: s }, o),
      };

      const emptyAt = {};
      for (const c of ctx.connections) {
        progress(`applicants: ${c} connections`);
        const [base, made] = await paired(c, insert, empty.create);
        const [baseGet, read] = await paired(c, get, empty.status);
        emptyAt[c] = { made, read };
        figures.push(
          figure({
            key: `applicants.create.c${c}`,
            bench: 'applicants',
            series: 'create',
            connections: c,
            rows: 'empty',
            figure: `POST /v1/applicants, ${c} conn`,
            unit: 'req/s',
            ...against(made, base, 'INSERT'),
            goal: c === 50 ? { ratioAtLeast: 1, p99AtMost: 50 } : { ratioAtLeast: 1 },
          }),
          figure({
            key: `applicants.status.c${c}`,
            bench: 'applicants',
            series: 'status',
            connections: c,
            rows: 'empty',
            figure: `GET /v1/applicants/{id}/status, ${c} conn`,
            unit: 'req/s',
            ...against(read, baseGet, 'GET'),
            goal: { ratioAtLeast: 0.3 },
          }),
        );
      }

      // The SDK's two hot GETs, at the middle connection count, beside the same bare GET.
      const mid = ctx.connections.includes(50) ? 50 : ctx.connections[0];
      progress(`applicants: hosted SDK calls, ${mid} connections`);
      const sdkBase = await measureGet(baseline, { connections: mid, duration: ctx.duration });
      for (const [series, label, url, extraHeaders] of [
        [
          'sdk-session',
          'GET /api/v1/sdk/session',
          `${api.url}/api/v1/sdk/session`,
          { authorization: `Bearer ${empty.token}` },
        ],
        ['sdk-page', 'GET /sdk/{shortCode} (page)', `${api.url}/sdk/${empty.shortCode}`, {}],
      ]) {
        const r = await measure(label, api, {
          url,
          connections: mid,
          duration: ctx.duration,
          headers: extraHeaders,
        });
        figures.push(
          figure({
            key: `applicants.${series}.c${mid}`,
            bench: 'applicants',
            series,
            connections: mid,
            rows: 'empty',
            figure: `${label}, ${mid} conn`,
            unit: 'req/s',
            ...against(r, sdkBase, 'GET'),
          }),
        );
      }
      await baseline.stop();
      baseline = null;

      if (ctx.preload) {
        // A second deployment on its own database holds the million rows; each preloaded point runs in
        // alternating slices with the same point on the empty tables, so both see the same machine.
        scale = await deployment('preloaded');
        // The empty-table server has been warmed by the whole empty phase; warm this one's JIT as long.
        progress('applicants: warming the preloaded deployment');
        for (const c of ctx.connections)
          for (const side of [scale.create, scale.status])
            await side.run(c, ctx.duration, { warmSeconds: 0, quiet: true });
        const seeded = await seed(scale.env.DATABASE_URL, 'applicants', ctx.rows);
        figures.push(
          figure({
            key: 'applicants.seed',
            bench: 'applicants',
            figure: `seed ${ctx.rows.toLocaleString('en')} applicants (COPY)`,
            unit: 's',
            value: seeded.seconds,
            rowsSeeded: seeded.rows,
            explain: await explainHotPaths(scale.env.DATABASE_URL, 'applicants'),
          }),
        );
        const preloaded = (side) => ({ ...side, label: `${side.label}, ${rowsLabel(ctx.rows)}` });
        for (const c of ctx.connections) {
          progress(`applicants: ${c} connections, ${ctx.rows.toLocaleString('en')} applicants preloaded`);
          const [emptyMade, made] = await paired(c, empty.create, preloaded(scale.create));
          const [emptyRead, read] = await paired(c, empty.status, preloaded(scale.status));
          for (const [series, r, e, label] of [
            ['create', made, emptyMade, 'POST /v1/applicants'],
            ['status', read, emptyRead, 'GET /v1/applicants/{id}/status'],
          ]) {
            figures.push(
              figure({
                key: `applicants.${series}.c${c}.preloaded`,
                bench: 'applicants',
                series,
                connections: c,
                rows: ctx.rows,
                figure: `${label}, ${c} conn, ${rowsLabel(ctx.rows)}`,
                unit: 'req/s',
                ...against(r, e, 'empty'),
                goal: { ratioAtLeast: 0.8, p99AtMostBaselineTimes: 1.5 },
              }),
            );
          }
        }
      }
    } finally {
      await baseline?.stop();
      await scale?.stop();
      await empty.stop();
    }
    return figures;
  },
};

/**
 * verification-api on a database of its own (migrated), with a product, its key, a default level, the
 * applicants the status read and the seeding use, and a hosted SDK session. `create` and `status` are the two
 * measured sides ({ label, run(connections, seconds, measureOpts) }).
 */
async function deployment(name) {
  const { createTestEnvironment, migratorFor, TEST_ADMIN_TOKEN } = appRequire('@tessera/testing');
  const { databaseOptions } = appRequire('./dist/database/database');
  const testEnv = await createTestEnvironment([
    migratorFor(databaseOptions, join(root, 'apps/verification-api/src/database/migrations')),
  ]);
  let api = null;
  try {
    const env = { ...testEnv.env, DB_POOL_SIZE: String(POOL) };
    api = await startServer(
      name === 'empty' ? 'verification-api' : `verification-api-${name}`,
      join(root, 'bench/lib/serve-verification.mjs'),
      {
        env: { BENCH_ENV: JSON.stringify(env) },
        profile: true,
      },
    );
    const headers = {
      'content-type': 'application/json',
      ...(await benchProduct(api.url, TEST_ADMIN_TOKEN, [
        { kind: 'personal_information' },
        { kind: 'identity_doc' },
        { kind: 'selfie' },
      ])),
    };
    for (const id of ['bench-status', 'seed-template', 'bench-sdk']) {
      const res = await fetch(`${api.url}/v1/applicants`, { method: 'POST', headers, body: body(id) });
      if (res.status !== 201) throw new Error(`create ${id}: ${res.status} ${await res.text()}`);
    }
    // The hosted SDK's hot calls: a session link and its token.
    const link = await (
      await fetch(`${api.url}/v1/applicants/bench-sdk/verifications`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'text/plain' },
      })
    ).json();
    const { token } = await (await fetch(`${api.url}/api/v1/sdk/links/${link.shortCode}`)).json();
    if (!token) throw new Error('no SDK token');
    const server = api;
    return {
      env,
      api,
      token,
      shortCode: link.shortCode,
      create: {
        label: 'POST /v1/applicants',
        run: (connections, duration, measureOpts) =>
          measure(
            'POST /v1/applicants',
            server,
            {
              url: `${server.url}/v1/applicants`,
              connections,
              duration,
              method: 'POST',
              headers,
              requests: [{ setupRequest: (req) => ({ ...req, body: body(`a-${randomUUID()}`) }) }],
            },
            measureOpts,
          ),
      },
      status: {
        label: 'GET /v1/applicants/{id}/status',
        run: (connections, duration, measureOpts) =>
          measure(
            'GET /v1/applicants/{id}/status',
            server,
            {
              url: `${server.url}/v1/applicants/bench-status/status`,
              connections,
              duration,
              method: 'GET',
              headers,
            },
            measureOpts,
          ),
      },
      stop: async () => {
        await server.stop();
        await testEnv.teardown();
      },
    };
  } catch (err) {
    await api?.stop();
    await testEnv.teardown();
    throw err;
  }
}

await standalone(import.meta.url, bench);
