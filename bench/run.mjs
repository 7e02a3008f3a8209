#!/usr/bin/env node
// `pnpm bench`: runs every bench (or --only NAME …), prints ONE table — figure, value, baseline, ratio, goal,
// met, and the server CPU ms per request beside every req/s — and writes bench/results/latest.json.
//
//   pnpm build && pnpm bench [--help] [--only aml,media-checks,applicants,custody,webhooks,media,chain] [--runs 3] [--quick]
//                            [--duration 5] [--connections 10,50,200] [--no-preload] [--rows 1000000] [--chart]
//
// --runs N repeats every bench N times and prints the median with the spread (min–max) of each number.
// --quick: 2 s points, 10 connections, no preloaded tables (the CI smoke). --chart: also renders the scale
// curves of this run to docs/images/performance/*.svg (bench/lib/chart.mjs).
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { optionsOrExit } from './lib/bench.mjs';
import { printStatements, statementsProbe } from './lib/pg-statements.mjs';
import { provenance, provenanceLine } from './lib/provenance.mjs';
import { root, stopAll } from './lib/proc.mjs';
import { aggregate, budgetLines, progress, table, writeJson } from './lib/report.mjs';

/** Every bench, in the order a full run takes them (cheap ones first). */
const BENCHES = {
  aml: () => import('./aml-screening.mjs'),
  'media-checks': () => import('./media-checks.mjs'),
  applicants: () => import('./applicants.mjs'),
  custody: () => import('./custody-transfer.mjs'),
  webhooks: () => import('./webhooks-delivery.mjs'),
  media: () => import('./media-stream.mjs'),
  chain: () => import('./chain.mjs'),
};

const ctx = optionsOrExit(process.argv.slice(2), Object.keys(BENCHES));
const names = ctx.only ?? Object.keys(BENCHES);

const started = new Date();
// Taken before the run, so the commit is the code that was measured.
const measuredOn = await provenance();
progress(`measuring ${provenanceLine(measuredOn)}`);
const runs = [];
const failures = [];
const statements = {};
const pgStatements = await statementsProbe();
try {
  for (let run = 1; run <= ctx.runs; run++) {
    const figures = [];
    for (const name of names) {
      const { bench } = await BENCHES[name]();
      progress(`run ${run}/${ctx.runs}: ${name} (${bench.description})`);
      await pgStatements?.reset();
      try {
        figures.push(...(await bench.run(ctx)));
        if (pgStatements) {
          const top = await pgStatements.top();
          (statements[name] ??= []).push(top);
          printStatements(name, top);
        }
      } catch (err) {
        failures.push({ run, bench: name, error: String(err?.stack ?? err) });
        progress(`run ${run}/${ctx.runs}: ${name} FAILED: ${err?.message ?? err}`);
      }
      await stopAll();
      // Written after every bench, so an interrupted run still leaves what it measured (partial: true).
      writeJson(ctx.out ?? join(root, 'bench/results/latest.json'), {
        partial: true,
        startedAt: started.toISOString(),
        machine: { ...measuredOn, loadavg: loadavg() },
        options: ctx,
        benches: names,
        figures: aggregate([...runs, figures]),
        failures,
      });
    }
    runs.push(figures);
  }
} finally {
  await stopAll();
  await pgStatements?.close();
}

const figures = aggregate(runs);
const header =
  `pnpm bench: ${names.join(', ')}; ${ctx.runs} run(s), ${ctx.duration} s per point, connections ` +
  `${ctx.connections.join('/')}${ctx.preload ? `, ${ctx.rows.toLocaleString('en')} rows preloaded` : ''}; ` +
  `load ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}; ${started.toISOString()}`;
console.log(header);
console.log(provenanceLine(measuredOn));
console.log(table(figures));
for (const line of budgetLines(figures)) console.log(line);
const out = ctx.out ?? join(root, 'bench/results/latest.json');
writeJson(out, {
  partial: false,
  startedAt: started.toISOString(),
  finishedAt: new Date().toISOString(),
  machine: { ...measuredOn, loadavg: loadavg() },
  options: ctx,
  benches: names,
  figures,
  failures,
  statements,
});
progress(`wrote ${out}`);
if (ctx.chart) {
  const { renderCharts } = await import('./lib/chart.mjs');
  for (const file of await renderCharts(figures)) progress(`wrote ${file}`);
}
if (failures.length) {
  for (const f of failures) console.error(`bench ${f.bench} (run ${f.run}) failed:\n${f.error}`);
  process.exitCode = 1;
}
