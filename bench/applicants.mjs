#!/usr/bin/env node
// Bench "applicants": POST /v1/applicants and GET /v1/applicants/{id}/status of verification-api at each
// connection count of the scale curve, beside the bare Fastify single INSERT … RETURNING (create) and the bare
// Fastify primary-key GET (status), measured in the same run on the same Postgres; then the same two figures
// with 1 million applicants preloaded (bench/seed-scale.mjs), set beside the empty-table run.
//
//   pnpm build && node bench/applicants.mjs [--duration 5] [--connections 10,50,200] [--no-preload]
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { standalone } from './lib/bench.mjs';
import { startBaselineServer, measureInsert, measureGet } from './lib/baselines.mjs';
import { interleaved, measure } from './lib/load.mjs';
import { requireFrom, root, startServer } from './lib/proc.mjs';
import { figure, progress, rowsLabel } from './lib/report.mjs';
import { explainHotPaths, seed } from './seed-scale.mjs';

const appRequire = requireFrom('apps/verification-api');
const POOL = 20;

const body = (externalUserId) =>
  JSON.stringify({ externalUserId, firstName: 'Bench', lastName: 'User', email: 'b@x.test' });

export const bench = {
  name: 'applicants',
  description: 'verification-api create and status vs bare Fastify INSERT and GET',
  async run(ctx) {
    const { createTestEnvironment, migratorFor, TEST_ADMIN_TOKEN } = appRequire('@tessera/testing');
    const { databaseOptions } = appRequire('./dist/database/database');
    const testEnv = await createTestEnvironment([
      migratorFor(databaseOptions, join(root, 'apps/verification-api/src/database/migrations')),
    ]);
    const figures = [];
    try {
      const env = { ...testEnv.env, DB_POOL_SIZE: String(POOL) };
      const api = await startServer('verification-api', join(root, 'bench/lib/serve-verification.mjs'), {
        env: { BENCH_ENV: JSON.stringify(env) },
        profile: true,
      });
      const baseline = await startBaselineServer(env.DATABASE_URL, { pool: POOL });

      const admin = async (path, b) => {
        const res = await fetch(`${api.url}/admin/v1${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify(b),
        });
        if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`);
        return res.json();
      };
      const product = await admin('/products', { name: 'Bench' });
      const key = await admin(`/products/${product.id}/keys`, { environment: 'production' });
      await admin(`/products/${product.id}/levels`, {
        name: 'BENCH_KYC',
        applicantType: 'individual',
        isDefault: true,
        steps: [{ kind: 'personal_information' }, { kind: 'identity_doc' }, { kind: 'selfie' }],
      });
      const headers = {
        'content-type': 'application/json',
        'x-api-key': key.apiKey,
        'x-api-secret': key.apiSecret,
        'x-environment': 'production',
      };
      for (const id of ['bench-status', 'seed-template', 'bench-sdk']) {
        const res = await fetch(`${api.url}/v1/applicants`, { method: 'POST', headers, body: body(id) });
        if (res.status !== 201) throw new Error(`create ${id}: ${res.status} ${await res.text()}`);
      }
      // The hosted SDK's hot calls (folded from the former bench/sdk-session.mjs): a session link and token.
      const link = await (
        await fetch(`${api.url}/v1/applicants/bench-sdk/verifications`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'text/plain' },
        })
      ).json();
      const { token } = await (await fetch(`${api.url}/api/v1/sdk/links/${link.shortCode}`)).json();
      if (!token) throw new Error('no SDK token');
      const create = (connections, duration, measureOpts) =>
        measure(
          'POST /v1/applicants',
          api,
          {
            url: `${api.url}/v1/applicants`,
            connections,
            duration,
            method: 'POST',
            headers,
            requests: [{ setupRequest: (req) => ({ ...req, body: body(`a-${randomUUID()}`) }) }],
          },
          measureOpts,
        );
      const status = (connections, duration, measureOpts) =>
        measure(
          'GET /v1/applicants/{id}/status',
          api,
          {
            url: `${api.url}/v1/applicants/bench-status/status`,
            connections,
            duration,
            method: 'GET',
            headers,
          },
          measureOpts,
        );
      // Each figure and its baseline in alternating slices (load.mjs interleaved).
      const paired = (c, baseLabel, measureBase, label, measureFigure) =>
        interleaved(
          [
            {
              label: baseLabel,
              connections: c,
              run: (s, o) => measureBase(baseline, { connections: c, duration: s }, o),
            },
            { label, connections: c, run: (s, o) => measureFigure(c, s, o) },
          ],
          ctx.duration,
        );
      const createAndInsert = (c) =>
        paired(c, 'baseline INSERT', measureInsert, 'POST /v1/applicants', create);
      const statusAndGet = (c) =>
        paired(c, 'baseline GET', measureGet, 'GET /v1/applicants/{id}/status', status);

      const empty = {};
      for (const c of ctx.connections) {
        progress(`applicants: ${c} connections`);
        const [base, made] = await createAndInsert(c);
        const [baseGet, read] = await statusAndGet(c);
        empty[c] = { made, read, base, baseGet };
        figures.push(
          figure({
            key: `applicants.create.c${c}`,
            bench: 'applicants',
            series: 'create',
            connections: c,
            rows: 'empty',
            figure: `POST /v1/applicants, ${c} conn`,
            unit: 'req/s',
            value: made.reqPerSec,
            baseline: base.reqPerSec,
            baselineLabel: 'INSERT',
            p50Ms: made.p50Ms,
            p99Ms: made.p99Ms,
            baselineP99Ms: base.p99Ms,
            cpuMsPerReq: made.cpuMsPerReq,
            baselineCpuMsPerReq: base.cpuMsPerReq,
            postgresCpuMsPerReq: made.postgresCpuMsPerReq,
            baselinePostgresCpuMsPerReq: base.postgresCpuMsPerReq,
            failures: made.failures,
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
            value: read.reqPerSec,
            baseline: baseGet.reqPerSec,
            baselineLabel: 'GET',
            p50Ms: read.p50Ms,
            p99Ms: read.p99Ms,
            baselineP99Ms: baseGet.p99Ms,
            cpuMsPerReq: read.cpuMsPerReq,
            baselineCpuMsPerReq: baseGet.cpuMsPerReq,
            postgresCpuMsPerReq: read.postgresCpuMsPerReq,
            baselinePostgresCpuMsPerReq: baseGet.postgresCpuMsPerReq,
            failures: read.failures,
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
          { authorization: `Bearer ${token}` },
        ],
        ['sdk-page', 'GET /sdk/{shortCode} (page)', `${api.url}/sdk/${link.shortCode}`, {}],
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
            value: r.reqPerSec,
            baseline: sdkBase.reqPerSec,
            baselineLabel: 'GET',
            p50Ms: r.p50Ms,
            p99Ms: r.p99Ms,
            baselineP99Ms: sdkBase.p99Ms,
            cpuMsPerReq: r.cpuMsPerReq,
            baselineCpuMsPerReq: sdkBase.cpuMsPerReq,
            postgresCpuMsPerReq: r.postgresCpuMsPerReq,
            baselinePostgresCpuMsPerReq: sdkBase.postgresCpuMsPerReq,
            failures: r.failures,
          }),
        );
      }

      if (ctx.preload) {
        const seeded = await seed(env.DATABASE_URL, 'applicants', ctx.rows);
        figures.push(
          figure({
            key: 'applicants.seed',
            bench: 'applicants',
            figure: `seed ${ctx.rows.toLocaleString('en')} applicants (COPY)`,
            unit: 's',
            value: seeded.seconds,
            rowsSeeded: seeded.rows,
            explain: await explainHotPaths(env.DATABASE_URL, 'applicants'),
          }),
        );
        for (const c of ctx.connections) {
          progress(`applicants: ${c} connections, ${ctx.rows.toLocaleString('en')} applicants preloaded`);
          const [base, made] = await createAndInsert(c);
          const [baseGet, read] = await statusAndGet(c);
          for (const [series, r, label, drift] of [
            ['create', made, 'POST /v1/applicants', empty[c].base.reqPerSec / base.reqPerSec],
            [
              'status',
              read,
              'GET /v1/applicants/{id}/status',
              empty[c].baseGet.reqPerSec / baseGet.reqPerSec,
            ],
          ]) {
            const e = series === 'create' ? empty[c].made : empty[c].read;
            figures.push(
              figure({
                key: `applicants.${series}.c${c}.preloaded`,
                bench: 'applicants',
                series,
                connections: c,
                rows: ctx.rows,
                figure: `${label}, ${c} conn, ${rowsLabel(ctx.rows)}`,
                unit: 'req/s',
                value: r.reqPerSec,
                baseline: e.reqPerSec,
                baselineLabel: 'empty',
                drift,
                p50Ms: r.p50Ms,
                p99Ms: r.p99Ms,
                baselineP99Ms: e.p99Ms,
                cpuMsPerReq: r.cpuMsPerReq,
                baselineCpuMsPerReq: e.cpuMsPerReq,
                postgresCpuMsPerReq: r.postgresCpuMsPerReq,
                baselinePostgresCpuMsPerReq: e.postgresCpuMsPerReq,
                failures: r.failures,
                goal: { ratioAtLeast: 0.8, p99AtMostBaselineTimes: 1.5 },
              }),
            );
          }
        }
      }
      await api.stop();
      await baseline.stop();
    } finally {
      await testEnv.teardown();
    }
    return figures;
  },
};

await standalone(import.meta.url, bench);
