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
export async function measure(label, servers, opts, { warmSeconds = 1 } = {}) {
  const list = Array.isArray(servers) ? servers : [servers];
  if (warmSeconds > 0) await load({ ...opts, duration: warmSeconds });
  const before = await Promise.all(list.map((s) => s.cpuMs()));
  const result = await load(opts);
  const after = await Promise.all(list.map((s) => s.cpuMs()));
  const cpu = after.reduce((sum, a, i) => sum + (a - before[i]), 0);
  result.cpuMsPerReq = cpu / Math.max(1, result.total);
  progress(
    `  ${label} c=${opts.connections}: ${Math.round(result.reqPerSec)} req/s, p99 ${result.p99Ms} ms, ` +
      `${result.cpuMsPerReq.toFixed(3)} CPU ms/req, ${result.failures} failures` +
      (result.failures ? ` ${JSON.stringify(result.failureKinds)}` : ''),
  );
  return result;
}
