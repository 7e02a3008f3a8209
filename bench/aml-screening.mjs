#!/usr/bin/env node
// Bench "aml": AML screenings per second against the full bundled OFAC SDN list (about 15,000 parties, 18,500
// names), in-process, beside a same-run baseline: a bare loop that only normalises the same names (the floor
// any screening pays). The names screened are the quality set of docs/aml-screening.md (listed variants and
// ordinary names), cycled, so hits, possible matches and clear names all take their share. Goal: ≥ 500/s.
//
//   pnpm build && node bench/aml-screening.mjs [--duration 5]
import { standalone } from './lib/bench.mjs';
import { measureCalls } from './lib/inprocess.mjs';
import { requireFrom } from './lib/proc.mjs';
import { figure, progress } from './lib/report.mjs';

export const bench = {
  name: 'aml',
  description: 'AML screening (OFAC SDN list) vs name normalisation only',
  async run(ctx) {
    const appRequire = requireFrom('apps/verification-api');
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
    progress(
      `aml: ${screening.entries().length} parties indexed in ${loadMs.toFixed(0)} ms; ${cases.length} names`,
    );
    let sink = 0;
    const base = await measureCalls((n) => {
      const c = cases[n % cases.length];
      sink += sortedKey(nameTokens(c.name, c.kind)).length;
    }, ctx.duration);
    const real = await measureCalls((n) => {
      const c = cases[n % cases.length];
      sink += screening.screen({ kind: c.kind, names: [c.name], dateOfBirth: c.dateOfBirth }).matches.length;
    }, ctx.duration);
    if (sink < 0) throw new Error('unreachable');
    progress(`  aml: ${real.perSecond.toFixed(0)} screenings/s, ${real.cpuMsEach.toFixed(3)} CPU ms each`);
    return [
      figure({
        key: 'aml.screen',
        bench: 'aml',
        figure: 'AML screenings (in-process)',
        unit: '/s',
        value: real.perSecond,
        baseline: base.perSecond,
        baselineLabel: 'normalise',
        cpuMsPerReq: real.cpuMsEach,
        baselineCpuMsPerReq: base.cpuMsEach,
        goal: { valueAtLeast: 500 },
      }),
    ];
  },
};

await standalone(import.meta.url, bench);
