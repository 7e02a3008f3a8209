// CI smoke of the bench harness: `pnpm bench --quick --only aml` (in-process, about 15 s) prints the one table
// and writes a results file of the documented shape. No timing assertion: only that the harness measures,
// compares with its same-run baseline and reports.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

const root = join(import.meta.dirname, '..');

test(
  'pnpm bench --quick --only aml prints the table and writes the results file',
  { timeout: 60_000 },
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-smoke-'));
    try {
      const out = join(dir, 'latest.json');
      const run = spawnSync('pnpm', ['bench', '--quick', '--only', 'aml', '--out', out], {
        cwd: root,
        encoding: 'utf8',
        timeout: 55_000,
      });
      assert.equal(run.status, 0, run.stderr);
      const lines = run.stdout.split('\n');
      const head = lines.find((l) => l.startsWith('| figure'));
      assert.ok(head, run.stdout);
      assert.deepEqual(
        head
          .split('|')
          .slice(1, 7)
          .map((c) => c.trim()),
        ['figure', 'value', 'baseline', 'ratio', 'goal', 'met'],
      );
      assert.ok(head.includes('CPU ms/req'));
      const row = lines.find((l) => l.startsWith('| AML screenings'));
      assert.ok(row, run.stdout);
      assert.match(row, /\/s normalise/);
      assert.match(run.stderr, /\[bench +\d+ s\] /, 'progress lines on stderr');

      const results = JSON.parse(readFileSync(out, 'utf8'));
      assert.deepEqual(results.benches, ['aml']);
      assert.equal(results.options.quick, true);
      assert.deepEqual(results.failures, []);
      assert.ok(results.machine.cpus >= 1);
      // What it was measured on: the commit, the durability settings, the versions; also printed.
      const head12 = spawnSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: root, encoding: 'utf8' });
      assert.equal(results.machine.commit, head12.stdout.trim());
      assert.equal(typeof results.machine.dirty, 'boolean');
      assert.match(results.machine.postgres.version, /^\d+\.\d+/);
      assert.equal(results.machine.postgres.settings.synchronous_commit, 'on');
      assert.equal(results.machine.postgres.settings.fsync, 'on');
      assert.match(results.machine.redis.version, /^\d+\.\d+/);
      assert.ok(
        lines.some(
          (l) => l.startsWith(`commit ${results.machine.commit}`) && l.includes('synchronous_commit=on'),
        ),
        run.stdout,
      );
      const [figure] = results.figures;
      assert.equal(figure.key, 'aml.screen');
      for (const k of ['value', 'baseline', 'ratio', 'cpuMsPerReq', 'baselineCpuMsPerReq'])
        assert.ok(Number.isFinite(figure[k]) && figure[k] > 0, `${k}: ${figure[k]}`);
      assert.ok(Math.abs(figure.ratio - figure.value / figure.baseline) < 1e-9);
      assert.equal(typeof figure.met, 'boolean');
      assert.deepEqual(Object.keys(figure.spread).sort(), [
        'baseline',
        'cpuMsPerReq',
        'p99Ms',
        'postgresCpuMsPerReq',
        'ratio',
        'value',
      ]);
      assert.equal(figure.runs, 1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test('a missed ratio goal names the CPU per request its rate leaves', async () => {
  const { aggregate, budgetLines, figure, table } = await import('../bench/lib/report.mjs');
  const create = {
    key: 'applicants.create.c10',
    figure: 'POST /v1/applicants, 10 conn',
    unit: 'req/s',
    goal: { ratioAtLeast: 1 },
    baseline: 4000,
  };
  // 4,000 req/s at the goal: one core is 0.25 ms per request.
  const slow = figure({ ...create, value: 1500, cpuMsPerReq: 0.6 });
  assert.equal(slow.met, false);
  assert.equal(slow.cpuBudget, 0.25);
  assert.deepEqual(budgetLines([slow]).slice(1), [
    '  POST /v1/applicants, 10 conn: goal 4000 req/s, budget 0.250 CPU ms/req, now 0.600 (2.40× over)',
  ]);
  // Within its budget, or met, or compared with the empty tables (a preloaded figure): no line.
  assert.deepEqual(budgetLines([figure({ ...create, value: 1500, cpuMsPerReq: 0.2 })]), []);
  assert.deepEqual(budgetLines([figure({ ...create, value: 4100, cpuMsPerReq: 0.6 })]), []);
  assert.equal(figure({ ...create, value: 1500, cpuMsPerReq: 0.6, rows: 1_000_000 }).cpuBudget, null);
  assert.equal(figure({ ...create, goal: { valueAtLeast: 500 }, value: 1, cpuMsPerReq: 1 }).cpuBudget, null);
  // Several runs: the budget comes from the median baseline.
  const [folded] = aggregate([
    [{ ...slow, baseline: 2000, ratio: 0.75 }],
    [{ ...slow, baseline: 5000, ratio: 0.3 }],
    [{ ...slow, baseline: 4000, ratio: 0.375 }],
  ]);
  assert.equal(folded.cpuBudget, 0.25);
  // Postgres' CPU per request on the same cores: in the budget line and in its own column of the table.
  const withPostgres = figure({
    ...create,
    value: 1500,
    cpuMsPerReq: 0.6,
    postgresCpuMsPerReq: 0.3,
    baselinePostgresCpuMsPerReq: 0.12,
  });
  assert.match(
    budgetLines([withPostgres])[1],
    /2\.40× over\); Postgres adds 0\.300 \/ 0\.120 \(figure \/ baseline\)/,
  );
  const [head, , row] = table([withPostgres]).split('\n');
  assert.equal(head.split('|').at(-2).trim(), 'Postgres CPU ms/req (figure / baseline)');
  assert.equal(row.split('|').at(-2).trim(), '0.300 / 0.120');
});

test(
  'postgresCpu reads the CPU of every Postgres process since it started, per process',
  { timeout: 30_000 },
  async () => {
    const { postgresCpu, requireFrom } = await import('../bench/lib/proc.mjs');
    const { Client } = requireFrom('libs/platform')('pg');
    const url = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
    const busy = new Client({ connectionString: url });
    await busy.connect();
    try {
      const since = postgresCpu();
      // A backend that works and then exits: its time leaves with it, and must not make the reading negative.
      const brief = new Client({ connectionString: url });
      await brief.connect();
      await brief.query('SELECT count(*) FROM generate_series(1, 3000000)');
      await brief.end();
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.ok(since() >= 0, `after an exit: ${since()}`);
      // A backend that stays: about 100 ms or more of work shows.
      await busy.query('SELECT count(*) FROM generate_series(1, 3000000)');
      assert.ok(since() >= 50, `after the work: ${since()}`);
    } finally {
      await busy.end();
    }
  },
);

test('the bench runs the product servers with the logging they are deployed with', async () => {
  const { DEPLOYED_LOGGING } = await import('../bench/lib/proc.mjs');
  for (const file of ['docker-compose.yml', 'deploy/k8s/base/config.yaml']) {
    const text = readFileSync(join(root, file), 'utf8');
    const levels = [...text.matchAll(/^\s*LOG_LEVEL:\s*"?(\w+)"?\s*$/gm)].map((m) => m[1]);
    assert.ok(levels.length > 0, `${file} sets LOG_LEVEL`);
    for (const level of levels) assert.equal(level, DEPLOYED_LOGGING.LOG_LEVEL, file);
    assert.doesNotMatch(text, /LOG_REQUESTS:\s*"?false/, `${file} keeps the access lines on`);
  }
  // Unset, LOG_REQUESTS is on, as the bench sets it.
  const config = readFileSync(join(root, 'libs/platform/src/config.ts'), 'utf8');
  assert.match(config, /LOG_REQUESTS: boolean\.default\(true\)/);
  assert.equal(DEPLOYED_LOGGING.LOG_REQUESTS, 'true');
});

test('a bad command line gets its reason and the usage, exit 2, before anything starts', () => {
  const bench = (...args) =>
    spawnSync(process.execPath, ['bench/run.mjs', ...args], { cwd: root, encoding: 'utf8', timeout: 20_000 });
  for (const [args, reason] of [
    [['--bogus'], "Unknown option '--bogus'"],
    [['--runs', '0'], '--runs must be a positive whole number, not "0"'],
    [['--runs', 'three'], '--runs must be a positive whole number, not "three"'],
    [['--duration=-1'], '--duration must be a positive number, not "-1"'],
    [['--connections', '10,,50'], '--connections must be a positive whole number, not ""'],
    [['--rows', '1e3.5'], '--rows must be a positive whole number, not "1e3.5"'],
    [['--only', 'applicants,nope'], 'unknown bench nope; one of aml, media-checks, applicants'],
  ]) {
    const run = bench(...args);
    assert.equal(run.status, 2, `${args.join(' ')}: ${run.stderr}`);
    assert.ok(run.stderr.startsWith(`bench: ${reason}`), `${args.join(' ')}: ${run.stderr}`);
    assert.match(run.stderr, /usage: pnpm bench \[options\]/);
    assert.doesNotMatch(run.stderr, /\n\s+at /, 'no stack trace');
    assert.equal(run.stdout, '', 'nothing started');
  }
  const help = bench('--help');
  assert.equal(help.status, 0, help.stderr);
  assert.match(help.stdout, /^usage: pnpm bench \[options\]/);
  for (const option of [
    '--only',
    '--runs',
    '--duration',
    '--connections',
    '--no-preload',
    '--rows',
    '--quick',
    '--chart',
    '--out',
  ])
    assert.ok(help.stdout.includes(`  ${option}`), option);
});

test('profile-top: the busiest window, a window picked by function, and writes charged to their caller', () => {
  // A synthetic V8 profile, one sample per millisecond: 3 s of start-up, 2 s idle, 2 s of creates (pg
  // queries ending in writev), 2 s idle, 2 s of status reads (fastify answers ending in writev).
  const frame = (id, functionName, url, children = []) => ({
    id,
    callFrame: { functionName, url, lineNumber: 0, columnNumber: 0, scriptId: '0' },
    children,
  });
  const pg = 'file:///w/node_modules/.pnpm/pg@8/node_modules/pg/lib/client.js';
  const fastify = 'file:///w/node_modules/.pnpm/fastify@5/node_modules/fastify/lib/reply.js';
  const nodes = [
    frame(1, '(root)', '', [2, 3, 4, 8]),
    frame(2, '(idle)', ''),
    frame(3, 'compile', 'node:internal/modules/cjs/loader'),
    frame(4, 'createMany', 'file:///w/apps/verification-api/dist/applicants.repository.js', [5]),
    frame(5, 'query', pg, [6]),
    frame(6, 'writevGeneric', 'node:internal/stream_base_commons', [7]),
    frame(7, 'writev', ''),
    frame(8, 'status', 'file:///w/apps/verification-api/dist/applicants.service.js', [9]),
    frame(9, 'send', fastify, [10]),
    frame(10, 'writev', ''),
  ];
  const samples = [
    ...Array(3000).fill(3),
    ...Array(2000).fill(2),
    ...Array.from({ length: 2000 }, (_, i) => (i % 4 === 0 ? 2 : i % 2 ? 7 : 5)),
    ...Array(2000).fill(2),
    ...Array.from({ length: 2000 }, (_, i) => (i % 2 ? 10 : 9)),
  ];
  const dir = mkdtempSync(join(tmpdir(), 'profile-top-'));
  try {
    const file = join(dir, 'x.cpuprofile');
    writeFileSync(
      file,
      JSON.stringify({
        nodes,
        startTime: 0,
        endTime: samples.length * 1000,
        samples,
        timeDeltas: samples.map(() => 1000),
      }),
    );
    const top = (...args) => {
      const run = spawnSync(process.execPath, [join(root, 'bench/lib/profile-top.mjs'), file, ...args], {
        encoding: 'utf8',
      });
      assert.equal(run.status, 0, run.stderr);
      return run.stdout;
    };
    const share = (out, section, name) =>
      Number(
        out
          .split(`${section}`)[1]
          .split('\n\n')[0]
          .match(new RegExp(`([\\d.]+) %  ${name}(?:\\n|$)`))?.[1] ?? 0,
      );

    const whole = top();
    assert.match(whole, /total 11000 ms sampled/);

    // The first 2 s without idle samples are the start-up: the busiest window is there.
    assert.match(
      top('--busiest', '2'),
      /total 2000 ms sampled \(the busiest 2 s\)[\s\S]*100\.0 %  node internals/,
    );

    // --with picks the creates' 2 s, where a quarter is idle and the writes are pg's.
    const creates = top('--busiest', '2', '--with', '^createMany ');
    assert.equal(share(creates, 'self time by package/area:', '\\(idle\\)'), 25, creates);
    assert.equal(
      share(creates, 'charged to the package that called them:', 'pg \\(via node\\)'),
      50,
      creates,
    );
    assert.equal(
      share(creates, 'charged to the package that called them:', 'fastify \\(via node\\)'),
      0,
      creates,
    );
    assert.equal(share(creates, 'inclusive time', 'createMany \\S+'), 75, creates);

    const reads = top('--busiest', '2', '--with', '^status ');
    assert.equal(
      share(reads, 'charged to the package that called them:', 'fastify \\(via node\\)'),
      50,
      reads,
    );
    assert.equal(share(reads, 'charged to the package that called them:', 'pg \\(via node\\)'), 0, reads);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('interleaved: figure and baseline alternate ABBA in slices, warm once, and combine over all slices', async () => {
  const { interleaved, slicesOf } = await import('../bench/lib/load.mjs');
  assert.deepEqual([0.5, 1, 2, 5, 30].map(slicesOf), [1, 1, 2, 4, 4]);
  const calls = [];
  // Each slice of side A answers 1,000 requests in 1 s at 0.1 CPU ms; side B's slices get slower.
  const side = (name, slice) => ({
    label: name,
    connections: 10,
    run: async (seconds, opts) => {
      calls.push(`${name}${opts.warmSeconds > 0 ? '+warm' : ''}:${seconds}`);
      assert.equal(opts.quiet, true);
      const n = slice(calls.filter((c) => c.startsWith(name)).length);
      return {
        reqPerSec: n.total,
        total: n.total,
        ok2xx: n.total - n.failures,
        failures: n.failures,
        failureKinds: n.failures ? { 500: n.failures } : {},
        p50Ms: n.p50,
        p99Ms: n.p99,
        seconds,
        cpuMsPerReq: n.cpu,
        postgresCpuMsPerReq: n.postgres,
      };
    },
  });
  const [a, b] = await interleaved(
    [
      side('A', () => ({ total: 1000, failures: 0, p50: 1, p99: 5, cpu: 0.1, postgres: 0.05 })),
      side('B', (i) => ({
        total: 500 * i,
        failures: i === 2 ? 3 : 0,
        p50: i,
        p99: 10 * i,
        cpu: 0.2,
        postgres: i,
      })),
    ],
    4,
  );
  assert.deepEqual(calls, ['A+warm:1', 'B+warm:1', 'B:1', 'A:1', 'A:1', 'B:1', 'B:1', 'A:1']);
  assert.equal(a.reqPerSec, 1000);
  assert.equal(a.slices, 4);
  assert.ok(Math.abs(a.cpuMsPerReq - 0.1) < 1e-12);
  // B: 500 + 1,000 + 1,500 + 2,000 requests in 4 s.
  assert.equal(b.total, 5000);
  assert.equal(b.reqPerSec, 1250);
  assert.equal(b.failures, 3);
  assert.deepEqual(b.failureKinds, { 500: 3 });
  assert.equal(b.p99Ms, 40, 'the highest slice p99, never an average');
  assert.equal(b.p50Ms, (1 * 500 + 2 * 1000 + 3 * 1500 + 4 * 2000) / 5000);
  // Postgres CPU per request is weighed by each slice's requests, as the server's is.
  assert.ok(Math.abs(a.postgresCpuMsPerReq - 0.05) < 1e-12);
  assert.ok(Math.abs(b.postgresCpuMsPerReq - (1 * 500 + 2 * 1000 + 3 * 1500 + 4 * 2000) / 5000) < 1e-12);
});

test('combine pools the answers of every slice for p50 and p99', async () => {
  const { combine, percentile } = await import('../bench/lib/load.mjs');
  assert.equal(percentile(Float64Array.of(), 99), null);
  assert.equal(percentile(Float64Array.of(1, 2, 3, 4), 50), 2);
  const slice = (values) => ({
    reqPerSec: values.length,
    total: values.length,
    ok2xx: values.length,
    failures: 0,
    failureKinds: {},
    latenciesMs: Float64Array.from(values).sort(),
    p50Ms: null,
    p99Ms: null,
    connectionStarts: 10,
    firstAnswerMaxMs: values.length,
    seconds: 1,
    cpuMsPerReq: 0.1,
  });
  // Alone, the second slice's p99 is 50 ms; over both slices' 200 answers the two slow ones are 1 %.
  const both = combine([slice(Array(100).fill(1)), slice([...Array(98).fill(2), 50, 50])]);
  assert.equal(both.p99Ms, 2);
  assert.equal(both.p50Ms, 1);
  assert.equal(both.connectionStarts, 20);
  assert.equal(both.firstAnswerMaxMs, 100);
});

test('load counts each connection’s first answer apart from the latencies', { timeout: 30_000 }, async () => {
  const { createServer } = await import('node:http');
  const { load } = await import('../bench/lib/load.mjs');
  // The first request on each connection waits 150 ms (a slow connect); every later one is answered at once.
  const answered = new WeakSet();
  const server = createServer((req, res) => {
    const first = !answered.has(req.socket);
    answered.add(req.socket);
    setTimeout(() => res.end('ok'), first ? 150 : 0);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const r = await load({ url: `http://127.0.0.1:${server.address().port}/`, connections: 20, duration: 1 });
    assert.equal(r.connectionStarts, 20);
    assert.ok(r.firstAnswerMaxMs >= 150, `slowest first answer ${r.firstAnswerMaxMs} ms`);
    assert.ok(r.total > 200, `${r.total} answers`);
    assert.equal(r.latenciesMs.length, r.total - 20);
    assert.ok(r.p99Ms < 100, `p99 ${r.p99Ms} ms over the answers on open connections`);
  } finally {
    server.close();
  }
});

test('a preloaded figure against its empty-table twin from the same slices: ratio and p99 goal, no CPU budget', async () => {
  const { against, figure } = await import('../bench/lib/report.mjs');
  const side = (reqPerSec, p99Ms) => ({ reqPerSec, p99Ms, p50Ms: 1, cpuMsPerReq: 0.5, failures: 0 });
  const goal = { ratioAtLeast: 0.8, p99AtMostBaselineTimes: 1.5 };
  const ok = figure({ key: 'x', rows: 1_000_000, goal, ...against(side(900, 30), side(1000, 25), 'empty') });
  assert.equal(ok.ratio, 0.9);
  assert.equal(ok.baselineP99Ms, 25);
  assert.equal(ok.met, true);
  assert.equal(ok.cpuBudget, null);
  // The p99 is judged against the twin's, measured in the same slices: 40 ms against 25 is 1.6×.
  assert.equal(
    figure({ key: 'x', rows: 1_000_000, goal, ...against(side(900, 40), side(1000, 25), 'empty') }).met,
    false,
  );
});
