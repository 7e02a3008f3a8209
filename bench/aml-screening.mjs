#!/usr/bin/env node
// Bench: AML screenings per second against the full bundled OFAC SDN list (about 15,000 parties, 18,500
// names), in-process, beside a same-run baseline: a bare loop that only normalises the same names (the
// floor any screening pays). Prints screenings/s, CPU ms per screening and the ratio to the baseline.
//
//   pnpm build && node bench/aml-screening.mjs [--seconds 5] [--runs 3]
//
// The names screened are the quality set of docs/aml-screening.md (listed variants and ordinary names),
// cycled, so hits, possible matches and clear names all take their share.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const appRequire = createRequire(join(here, '../apps/verification-api/package.json'));
const { values: args } = parseArgs({
  options: { seconds: { type: 'string', default: '5' }, runs: { type: 'string', default: '3' } },
});

appRequire('@nestjs/common').Logger.overrideLogger(['error']);
const { ScreeningService } = appRequire('./dist/modules/screening/screening.service');
const { SanctionsListRepository } = appRequire('./dist/modules/screening/sanctions-list.repository');
const { listedCases, ordinaryCases } = appRequire('./dist/modules/screening/screening-quality');
const { nameTokens, sortedKey } = appRequire('./dist/modules/screening/name-normalizer');

const loadStarted = process.hrtime.bigint();
const screening = new ScreeningService(new SanctionsListRepository());
screening.warmUp();
const loadMs = Number(process.hrtime.bigint() - loadStarted) / 1e6;
const cases = [...listedCases(screening.entries()), ...ordinaryCases()];

function measure(label, fn) {
  const deadline = Date.now() + Number(args.seconds) * 1000;
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  let n = 0;
  let sink = 0;
  while (Date.now() < deadline) {
    for (let i = 0; i < 50; i++) sink += fn(cases[n++ % cases.length]);
  }
  const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const cpu = process.cpuUsage(cpu0);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  return { label, n, perSecond: (n / wallMs) * 1000, cpuMsEach: cpuMs / n, sink };
}

const baseline = (c) => sortedKey(nameTokens(c.name, c.kind)).length;
const screen = (c) =>
  screening.screen({ kind: c.kind, names: [c.name], dateOfBirth: c.dateOfBirth }).matches.length;

console.log(
  `list: ${screening.entries().length} parties, loaded and indexed in ${loadMs.toFixed(0)} ms; ${cases.length} names cycled; ${args.runs} runs of ${args.seconds} s`,
);
const rows = [];
for (let run = 1; run <= Number(args.runs); run++) {
  const base = measure('normalise only (baseline)', baseline);
  const real = measure('screening', screen);
  rows.push({ run, base, real });
  console.log(
    `run ${run}: screening ${real.perSecond.toFixed(0)}/s (${real.cpuMsEach.toFixed(3)} CPU ms each); ` +
      `baseline ${base.perSecond.toFixed(0)}/s (${base.cpuMsEach.toFixed(4)} CPU ms each); ` +
      `screening costs ${(base.perSecond / real.perSecond).toFixed(1)}x the baseline`,
  );
}
const rates = rows.map((r) => r.real.perSecond);
console.log(
  `screenings/s: min ${Math.min(...rates).toFixed(0)}, max ${Math.max(...rates).toFixed(0)} (goal >= 500)`,
);
