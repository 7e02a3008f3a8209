// What every bench file shares: the options of a run and the standalone entry (`node bench/<name>.mjs`).
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { aggregate, table, progress } from './report.mjs';
import { stopAll } from './proc.mjs';

/** Printed by --help, and after a usage error; `names` are the benches --only takes (run.mjs's list). */
export const usage = (
  names,
) => `usage: pnpm bench [options]      (or node bench/<name>.mjs [options] for one bench)

  --only NAME[,NAME…]   run these benches only${names ? `: ${names.join(', ')}` : ''}
  --runs N              repeat every bench N times; the table shows medians with the spread (min–max)  [1]
  --duration S          seconds of every measured point  [5; 2 with --quick]
  --connections A,B,…   the connection counts of the scale curves  [10,50,200; 10 with --quick]
  --no-preload          skip the figures with preloaded tables
  --rows N              rows to preload  [1000000]
  --quick               2 s points, 10 connections, no preloaded tables (the CI smoke)
  --chart               also render the scale curves to docs/images/performance/*.svg
  --out FILE            where to write the JSON results  [bench/results/latest.json]
  --help                this text`;

/** A bad command line: what is wrong, then the usage. */
export class UsageError extends Error {}

const positive = (name, text, integer = true) => {
  const n = Number(text);
  if (text === '' || !Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n)))
    throw new UsageError(`--${name} must be a positive ${integer ? 'whole ' : ''}number, not "${text}"`);
  return n;
};

/**
 * The options a bench's run(ctx) reads:
 *   duration    seconds of every measured point (default 5; --quick 2)
 *   connections the connection counts of the scale curves (default 10, 50, 200; --quick 10)
 *   preload     also run the figures with 1 million rows preloaded (default on; off with --quick or --no-preload)
 *   rows        how many rows to preload (default 1,000,000)
 * Throws UsageError for an unknown option or a value that is not a positive number; `help` is set by --help.
 */
export function options(argv = process.argv.slice(2)) {
  let values;
  try {
    ({ values } = parseArgs({
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
        help: { type: 'boolean', default: false },
      },
      allowPositionals: false,
    }));
  } catch (err) {
    throw new UsageError(err.message);
  }
  const quick = values.quick;
  return {
    help: values.help,
    only: values.only?.flatMap((o) => o.split(',')).filter(Boolean) ?? null,
    runs: positive('runs', values.runs),
    quick,
    duration: positive('duration', values.duration ?? (quick ? '2' : '5'), false),
    connections: (values.connections ?? (quick ? '10' : '10,50,200'))
      .split(',')
      .map((c) => positive('connections', c)),
    preload: !quick && !values['no-preload'],
    rows: positive('rows', values.rows),
    out: values.out,
    chart: values.chart,
  };
}

/** options(), or the usage on stdout (--help, exit 0) or stderr (a usage error, exit 2). */
export function optionsOrExit(argv = process.argv.slice(2), known = null) {
  try {
    const ctx = options(argv);
    if (ctx.help) {
      console.log(usage(known));
      process.exit(0);
    }
    const unknown = known ? (ctx.only ?? []).filter((n) => !known.includes(n)) : [];
    if (unknown.length)
      throw new UsageError(`unknown bench ${unknown.join(', ')}; one of ${known.join(', ')}`);
    return ctx;
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`bench: ${err.message}\n\n${usage(known)}`);
    process.exit(2);
  }
}

/** `node bench/<name>.mjs [options]` runs that one bench and prints its table. */
export async function standalone(importMetaUrl, bench) {
  if (process.argv[1] && pathToFileURL(process.argv[1]).href !== importMetaUrl) return;
  const ctx = optionsOrExit();
  try {
    progress(`${bench.name}: ${bench.description}`);
    const figures = await bench.run(ctx);
    console.log(table(aggregate([figures])));
  } finally {
    await stopAll();
  }
}
