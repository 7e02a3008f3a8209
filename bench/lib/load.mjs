// HTTP load with autocannon 9, and the server-side CPU it cost (CPU ms per request beside every req/s).
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { root } from './proc.mjs';
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

/** One autocannon run; resolves to req/s, latency percentiles and failure counts. */
export function load({ connections, duration, ...opts }) {
  return new Promise((resolve, reject) => {
    autocannon({ connections, duration, ...opts }, (err, r) => {
      if (err) return reject(err);
      resolve({
        reqPerSec: r.requests.average,
        total: r.requests.total,
        ok2xx: r['2xx'],
        failures: r.non2xx + r.errors + r.timeouts,
        failureKinds: failureKinds(r),
        p50Ms: r.latency.p50,
        p99Ms: r.latency.p99,
        seconds: r.duration,
      });
    });
  });
}

/**
 * Warms up (`warmSeconds`), then loads `servers[0]` (the process answering) for `duration` seconds and reads
 * the CPU time of every listed server process over the run: cpuMsPerReq is their sum over requests answered.
 */
export async function measure(label, servers, opts, { warmSeconds = 1, quiet = false } = {}) {
  const list = Array.isArray(servers) ? servers : [servers];
  if (warmSeconds > 0) await load({ ...opts, duration: warmSeconds });
  const before = await Promise.all(list.map((s) => s.cpuMs()));
  const result = await load(opts);
  const after = await Promise.all(list.map((s) => s.cpuMs()));
  const cpu = after.reduce((sum, a, i) => sum + (a - before[i]), 0);
  result.cpuMsPerReq = cpu / Math.max(1, result.total);
  if (!quiet) report(label, opts.connections, result);
  return result;
}

function report(label, connections, result, how = '') {
  progress(
    `  ${label} c=${connections}: ${Math.round(result.reqPerSec)} req/s, p99 ${result.p99Ms} ms, ` +
      `${result.cpuMsPerReq.toFixed(3)} CPU ms/req, ${result.failures} failures${how}` +
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
 * side warms up once, before its first slice. Returns one combined result per side: req/s over all slices,
 * CPU ms per request over all slices, failures summed, p50 the request-weighted mean of the slices' p50s and
 * p99 the highest slice's p99 (an upper bound of the pooled p99: a goal on it is never met by averaging).
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

/** One result from the slices of one side (see interleaved). */
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
    p50Ms: total > 0 ? sum((r) => r.p50Ms * r.total) / total : results[0].p50Ms,
    p99Ms: Math.max(...results.map((r) => r.p99Ms)),
    seconds,
    cpuMsPerReq: sum((r) => r.cpuMsPerReq * Math.max(1, r.total)) / Math.max(1, total),
    slices: results.length,
  };
}
