// CI smoke of the bench harness: `pnpm bench --quick --only aml` (in-process, about 15 s) prints the one table
// and writes a results file of the documented shape. No timing assertion: only that the harness measures,
// compares with its same-run baseline and reports.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

const root = join(import.meta.dirname, '..');

test(
  'pnpm bench --quick --only aml prints the table and writes the results file',
  { timeout: 60_000 },
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-smoke-'));
    try {
      const out = join(dir, 'latest.json');
      const run = spawnSync('pnpm', ['bench', '--quick', '--only', 'aml', '--out', out], {
        cwd: root,
        encoding: 'utf8',
        timeout: 55_000,
      });
      assert.equal(run.status, 0, run.stderr);
      const lines = run.stdout.split('\n');
      const head = lines.find((l) => l.startsWith('| figure'));
      assert.ok(head, run.stdout);
      assert.deepEqual(
        head
          .split('|')
          .slice(1, 7)
          .map((c) => c.trim()),
        ['figure', 'value', 'baseline', 'ratio', 'goal', 'met'],
      );
      assert.ok(head.includes('CPU ms/req'));
      const row = lines.find((l) => l.startsWith('| AML screenings'));
      assert.ok(row, run.stdout);
      assert.match(row, /\/s normalise/);
      assert.match(run.stderr, /\[bench +\d+ s\] /, 'progress lines on stderr');

      const results = JSON.parse(readFileSync(out, 'utf8'));
      assert.deepEqual(results.benches, ['aml']);
      assert.equal(results.options.quick, true);
      assert.deepEqual(results.failures, []);
      assert.ok(results.machine.cpus >= 1);
      const [figure] = results.figures;
      assert.equal(figure.key, 'aml.screen');
      for (const k of ['value', 'baseline', 'ratio', 'cpuMsPerReq', 'baselineCpuMsPerReq'])
        assert.ok(Number.isFinite(figure[k]) && figure[k] > 0, `${k}: ${figure[k]}`);
      assert.ok(Math.abs(figure.ratio - figure.value / figure.baseline) < 1e-9);
      assert.equal(typeof figure.met, 'boolean');
      assert.deepEqual(Object.keys(figure.spread).sort(), [
        'baseline',
        'cpuMsPerReq',
        'p99Ms',
        'ratio',
        'value',
      ]);
      assert.equal(figure.runs, 1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
