// What every bench file shares: the options of a run and the standalone entry (`node bench/<name>.mjs`).
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { aggregate, table, progress } from './report.mjs';
import { stopAll } from './proc.mjs';

/**
 * The options a bench's run(ctx) reads:
 *   duration    seconds of every measured point (default 5; --quick 2)
 *   connections the connection counts of the scale curves (default 10, 50, 200; --quick 10)
 *   preload     also run the figures with 1 million rows preloaded (default on; off with --quick or --no-preload)
 *   rows        how many rows to preload (default 1,000,000)
 */
export function options(argv = process.argv.slice(2)) {
  const { values } = parseArgs({
    args: argv,
    options: {
      only: { type: 'string', multiple: true },
      runs: { type: 'string', default: '1' },
      quick: { type: 'boolean', default: false },
      duration: { type: 'string' },
      connections: { type: 'string' },
      'no-preload': { type: 'boolean', default: false },
      rows: { type: 'string', default: '1000000' },
      out: { type: 'string' },
      chart: { type: 'boolean', default: false },
    },
    allowPositionals: false,
  });
  const quick = values.quick;
  return {
    only: values.only?.flatMap((o) => o.split(',')) ?? null,
    runs: Number(values.runs),
    quick,
    duration: Number(values.duration ?? (quick ? 2 : 5)),
    connections: (values.connections ?? (quick ? '10' : '10,50,200')).split(',').map(Number),
    preload: !quick && !values['no-preload'],
    rows: Number(values.rows),
    out: values.out,
    chart: values.chart,
  };
}

/** `node bench/<name>.mjs [options]` runs that one bench and prints its table. */
export async function standalone(importMetaUrl, bench) {
  if (process.argv[1] && pathToFileURL(process.argv[1]).href !== importMetaUrl) return;
  const ctx = options();
  try {
    progress(`${bench.name}: ${bench.description}`);
    const figures = await bench.run(ctx);
    console.log(table(aggregate([figures])));
  } finally {
    await stopAll();
  }
}
