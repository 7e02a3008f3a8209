// HTTP load with autocannon 9, and the server-side CPU it cost (CPU ms per request beside every req/s).
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { postgresCpu, root } from './proc.mjs';
import { progress } from './report.mjs';

const autocannon = createRequire(join(root, 'package.json'))('autocannon');

/** What the failures of a run were: non-2xx status codes with their counts, errors, timeouts. */
function failureKinds(r) {
  const kinds = {};
  for (const [code, { count }] of Object.entries(r.statusCodeStats ?? {})) {
    if (!code.startsWith('2')) kinds[code] = count;
  }
  if (r.errors) kinds.errors = r.errors;
  if (r.timeouts) kinds.timeouts = r.timeouts;
  return kinds;
}

/** The q-th percentile (0–100) of ascending `sorted`, nearest rank; null when it is empty. */
export function percentile(sorted, q) {
  if (sorted.length === 0) return null;
  return sorted[Math.max(0, Math.min(sorted.length - 1, Math.ceil((q / 100) * sorted.length) - 1))];
}

/**
 * The latencies of one load run as a keep-alive client sees them: every 2xx answer on a connection that is
 * already open (autocannon's own histogram keeps 2xx answers too). Each connection's first answer carries its
 * connect, and with 200 connections the queue of 200 connects at once; it is counted apart (`connectionStarts`
 * and the slowest, `firstAnswerMaxMs`). An interleaved point opens its connections afresh in every slice, and
 * counted in, four slices' connects were 3 % of the answers at 200 connections: the p99 measured them
 * (decision 0414).
 */
function latencyRecorder() {
  const latencies = [];
  const opened = new WeakSet();
  let connectionStarts = 0;
  let firstAnswerMaxMs = 0;
  return {
    onResponse(client, statusCode, _bytes, ms) {
      if (!opened.has(client)) {
        opened.add(client);
        connectionStarts += 1;
        firstAnswerMaxMs = Math.max(firstAnswerMaxMs, ms);
      } else if (statusCode >= 200 && statusCode < 300) latencies.push(ms);
    },
    result() {
      const latenciesMs = Float64Array.from(latencies).sort();
      return {
        latenciesMs,
        p50Ms: percentile(latenciesMs, 50),
        p99Ms: percentile(latenciesMs, 99),
        connectionStarts,
        firstAnswerMaxMs,
      };
    },
  };
}

/** One autocannon run; resolves to req/s, latency percentiles (see latencyRecorder) and failure counts. */
export function load({ connections, duration, ...opts }) {
  return new Promise((resolve, reject) => {
    const timing = latencyRecorder();
    const instance = autocannon({ connections, duration, ...opts }, (err, r) => {
      if (err) return reject(err);
      resolve({
        reqPerSec: r.requests.average,
        total: r.requests.total,
        ok2xx: r['2xx'],
        failures: r.non2xx + r.errors + r.timeouts,
        failureKinds: failureKinds(r),
        ...timing.result(),
        seconds: r.duration,
      });
    });
    instance.on('response', timing.onResponse);
  });
}

/**
 * Warms up (`warmSeconds`), then loads `servers[0]` (the process answering) for `duration` seconds and reads
 * the CPU time of every listed server process over the run: cpuMsPerReq is their sum over requests answered.
 * postgresCpuMsPerReq is the same for every Postgres process of the machine (proc.mjs postgresCpu): the
 * database's share of each request, which the same two cores pay too.
 */
export async function measure(label, servers, opts, { warmSeconds = 1, quiet = false } = {}) {
  const list = Array.isArray(servers) ? servers : [servers];
  if (warmSeconds > 0) await load({ ...opts, duration: warmSeconds });
  const before = await Promise.all(list.map((s) => s.cpuMs()));
  const postgresSince = postgresCpu();
  const result = await load(opts);
  const after = await Promise.all(list.map((s) => s.cpuMs()));
  const cpu = after.reduce((sum, a, i) => sum + (a - before[i]), 0);
  result.cpuMsPerReq = cpu / Math.max(1, result.total);
  result.postgresCpuMsPerReq = postgresSince() / Math.max(1, result.total);
  if (!quiet) report(label, opts.connections, result);
  return result;
}

function report(label, connections, result, how = '') {
  progress(
    `  ${label} c=${connections}: ${Math.round(result.reqPerSec)} req/s, p99 ${result.p99Ms == null ? '–' : result.p99Ms.toFixed(1)} ms, ` +
      `${result.cpuMsPerReq.toFixed(3)} CPU ms/req (Postgres ${result.postgresCpuMsPerReq?.toFixed(3) ?? '–'}), ` +
      `${result.failures} failures${how}` +
      (result.connectionStarts
        ? `, ${result.connectionStarts} connection starts (slowest first answer ${Math.round(result.firstAnswerMaxMs)} ms)`
        : '') +
      (result.failures ? ` ${JSON.stringify(result.failureKinds)}` : ''),
  );
}

/**
 * The slices of one interleaved point: about one per second of `duration`, at most 4, so each slice still
 * holds thousands of requests.
 */
export const slicesOf = (duration) => Math.max(1, Math.min(4, Math.floor(duration)));

/**
 * A figure and its same-run baseline measured in alternating slices, baseline first, then product, product,
 * baseline, baseline, … (ABBA: a machine that speeds up or slows down steadily during the point weighs on
 * both sides alike), `duration` seconds for each side in all. This machine's speed drifts by tens of per cent
 * within a minute, which a baseline measured whole before its figure turns into the ratio's error.
 *
 * `sides` are `{ label, connections, run(seconds, { warmSeconds, quiet }) }`, where run is a `measure`. Each
 * side warms up once, before its first slice. Returns one combined result per side (see combine).
 */
export async function interleaved(sides, duration) {
  const slices = slicesOf(duration);
  const parts = await alternate(slices, (side, i) =>
    sides[side].run(duration / slices, { warmSeconds: i === 0 ? 1 : 0, quiet: true }),
  );
  return parts.map((results, side) => {
    const combined = combine(results);
    report(sides[side].label, sides[side].connections, combined, slices > 1 ? ` (${slices} slices)` : '');
    return combined;
  });
}

/**
 * Runs `slices` slices of two sides in ABBA order (side 0 first: 0 1 1 0 0 1 …); `slice(side, i)` runs slice i
 * of a side. Returns each side's slice results, in order.
 */
export async function alternate(slices, slice) {
  const parts = [[], []];
  for (let i = 0; i < slices; i++)
    for (const side of i % 2 === 0 ? [0, 1] : [1, 0]) parts[side].push(await slice(side, i));
  return parts;
}

/**
 * One result from the slices of one side: req/s and CPU ms per request over all slices, failures summed, and
 * p50 and p99 over the answers of all slices pooled (decision 0414). Slices without their latencies (a caller
 * that only has percentiles) give the request-weighted mean of their p50s and the highest of their p99s, an
 * upper bound of the pooled p99, so a goal on it is never met by averaging.
 */
export function combine(results) {
  const sum = (f) => results.reduce((n, r) => n + f(r), 0);
  const total = sum((r) => r.total);
  const seconds = sum((r) => r.seconds);
  const failureKinds = {};
  for (const r of results)
    for (const [kind, n] of Object.entries(r.failureKinds ?? {}))
      failureKinds[kind] = (failureKinds[kind] ?? 0) + n;
  return {
    reqPerSec: seconds > 0 ? total / seconds : 0,
    total,
    ok2xx: sum((r) => r.ok2xx),
    failures: sum((r) => r.failures),
    failureKinds,
    ...latencyOf(results, total),
    connectionStarts: sum((r) => r.connectionStarts ?? 0),
    firstAnswerMaxMs: Math.max(0, ...results.map((r) => r.firstAnswerMaxMs ?? 0)),
    seconds,
    cpuMsPerReq: sum((r) => r.cpuMsPerReq * Math.max(1, r.total)) / Math.max(1, total),
    postgresCpuMsPerReq: results.every((r) => r.postgresCpuMsPerReq != null)
      ? sum((r) => r.postgresCpuMsPerReq * Math.max(1, r.total)) / Math.max(1, total)
      : null,
    slices: results.length,
  };
}

function latencyOf(results, total) {
  if (results.every((r) => r.latenciesMs)) {
    const pooled = new Float64Array(results.reduce((n, r) => n + r.latenciesMs.length, 0));
    let at = 0;
    for (const r of results) {
      pooled.set(r.latenciesMs, at);
      at += r.latenciesMs.length;
    }
    pooled.sort();
    return { p50Ms: percentile(pooled, 50), p99Ms: percentile(pooled, 99) };
  }
  return {
    p50Ms: total > 0 ? results.reduce((n, r) => n + r.p50Ms * r.total, 0) / total : results[0].p50Ms,
    p99Ms: Math.max(...results.map((r) => r.p99Ms)),
  };
}
