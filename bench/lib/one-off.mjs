// What the one-off benches of single decisions share (bench/transaction-moves.mjs, bench/time-ordered-ids.mjs):
// integer options, a fresh database with custody's migrations, and the median (min–max) they print.
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { median } from './ab-compare.mjs';
import { requireFrom, root } from './proc.mjs';

export { median };

/** `require` from apps/custody-api, whose dependencies (pg, @tessera/testing) the one-off benches use. */
export const custodyRequire = requireFrom('apps/custody-api');

/**
 * `--name N` options with their defaults, each a positive integer; a name in `lists` takes `N,N,…`. Anything
 * else prints the usage and exits 2.
 */
export function integerOptions(script, defaults, lists = []) {
  const usage = () => {
    const shown = Object.keys(defaults).map((k) => `[--${k} ${lists.includes(k) ? 'N,N' : 'N'}]`);
    console.error(`usage: node bench/${script} ${shown.join(' ')}`);
    process.exit(2);
  };
  let values;
  try {
    ({ values } = parseArgs({
      options: Object.fromEntries(
        Object.entries(defaults).map(([k, v]) => [k, { type: 'string', default: String(v) }]),
      ),
    }));
  } catch {
    usage();
  }
  const parsed = Object.fromEntries(
    Object.entries(values).map(([k, v]) => [k, lists.includes(k) ? v.split(',').map(Number) : Number(v)]),
  );
  if (
    !Object.values(parsed)
      .flat()
      .every((n) => Number.isInteger(n) && n >= 1)
  )
    usage();
  return parsed;
}

/** A fresh database with custody's migrations (libs/testing's environment); `teardown()` drops it. */
export function custodyDatabase() {
  const testing = custodyRequire('@tessera/testing');
  const { databaseOptions } = custodyRequire(join(root, 'apps/custody-api/dist/database/database.js'));
  return testing.createTestEnvironment([
    testing.migratorFor(databaseOptions, join(root, 'apps/custody-api/src/database/migrations')),
  ]);
}

/** `median (min–max)` of the runs' values, to `digits` decimals. */
export const spread = (xs, digits) =>
  `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})`;
