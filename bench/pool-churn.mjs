// What closing a burst's idle pool connections costs the other sessions (decision 0416): pg-pool's default
// closes each connection after 10 s idle, so the connections a burst opened close together. N connections
// are opened (each runs one catalog query, as a service's first statements do), then closed at once, while
// another session runs `SELECT 1` every 2 ms; the baseline is the same probe while nothing closes, measured
// in the same run, ABAB. The machine's busy CPU time (every core, /proc/stat) over the closing says whether the
// time goes to CPU (the exiting backends' own time cannot be read once they are gone).
//
//   node bench/pool-churn.mjs [--connections 20] [--rounds 3]
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { ADMIN_URL, requireFrom } from './lib/proc.mjs';
import { progress } from './lib/report.mjs';

const { Client } = requireFrom('libs/platform')('pg');
const { values } = parseArgs({
  options: { connections: { type: 'string', default: '20' }, rounds: { type: 'string', default: '3' } },
});
const n = Number(values.connections);
const rounds = Number(values.rounds);
if (!Number.isInteger(n) || n < 1 || !Number.isInteger(rounds) || rounds < 1) {
  console.error('usage: node bench/pool-churn.mjs [--connections N] [--rounds N]');
  process.exit(2);
}

/** Busy CPU ms of the whole machine, every core (Linux /proc/stat: all but idle and iowait; USER_HZ = 100). */
function machineBusyMs() {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  return (ticks.reduce((a, b) => a + b, 0) - ticks[3] - ticks[4]) * 10;
}

/** The probe's slowest `SELECT 1` while `during()` runs, and the machine's busy CPU over it. */
async function probe(session, during) {
  let slowest = 0;
  let stop = false;
  const loop = (async () => {
    while (!stop) {
      const t = performance.now();
      await session.query('SELECT 1');
      slowest = Math.max(slowest, performance.now() - t);
      await sleep(2);
    }
  })();
  await sleep(100);
  slowest = 0;
  const busy0 = machineBusyMs();
  const started = performance.now();
  await during();
  const ms = performance.now() - started;
  const busyMs = machineBusyMs() - busy0;
  await sleep(300);
  stop = true;
  await loop;
  return { slowest, ms, busyMs };
}

const session = new Client({ connectionString: ADMIN_URL });
await session.connect();
console.log(
  `| round | closing ${n} idle connections at once | probe's slowest SELECT 1 | machine CPU busy meanwhile | baseline: nothing closes, slowest SELECT 1 |`,
);
console.log('|---|---|---|---|---|');
try {
  for (let round = 1; round <= rounds; round++) {
    progress(`pool churn: round ${round} of ${rounds}`);
    const idle = await Promise.all(
      Array.from({ length: n }, async () => {
        const c = new Client({ connectionString: ADMIN_URL });
        await c.connect();
        await c.query('SELECT count(*) FROM pg_class');
        return c;
      }),
    );
    const pair = [];
    for (const side of round % 2 ? ['close', 'idle'] : ['idle', 'close'])
      pair[side === 'close' ? 0 : 1] = await probe(session, () =>
        side === 'close' ? Promise.all(idle.map((c) => c.end())) : sleep(250),
      );
    const [closing, baseline] = pair;
    console.log(
      `| ${round} | ${closing.ms.toFixed(0)} ms | ${closing.slowest.toFixed(1)} ms | ${closing.busyMs.toFixed(0)} ms of ${(cpus().length * closing.ms).toFixed(0)} | ${baseline.slowest.toFixed(1)} ms |`,
    );
  }
} finally {
  await session.end();
}
