// `pnpm bench:ab` (bench/ab.mjs): the comparison's verdicts on made-up runs, then one real pair of the
// in-process AML bench with this checkout as both arms (no worktree: --base-dir and --head-dir).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { compare, comparisonTable } from '../bench/lib/ab-compare.mjs';
import { benchFingerprint } from '../bench/lib/provenance.mjs';

const root = join(import.meta.dirname, '..');

/** One run's results file with one create figure. */
const runOf = ({ ratio, cpu, p99 }) => ({
  figures: [
    {
      key: 'applicants.create.c50',
      figure: 'POST /v1/applicants, 50 conn',
      ratio,
      cpuMsPerReq: cpu,
      baselineCpuMsPerReq: 0.25,
      postgresCpuMsPerReq: 0.2,
      baselinePostgresCpuMsPerReq: 0.2,
      p99Ms: p99,
    },
  ],
});

const row = (rows, measure) => rows.find((r) => r.measure === measure);

test('a move counts only when every pair agrees and it exceeds the base arm’s spread', () => {
  const rows = compare([
    { base: runOf({ ratio: 0.6, cpu: 0.5, p99: 40 }), head: runOf({ ratio: 0.7, cpu: 0.5, p99: 30 }) },
    { base: runOf({ ratio: 0.62, cpu: 0.5, p99: 40 }), head: runOf({ ratio: 0.72, cpu: 0.4, p99: 50 }) },
    { base: runOf({ ratio: 0.61, cpu: 0.5, p99: 40 }), head: runOf({ ratio: 0.71, cpu: 0.45, p99: 35 }) },
  ]);
  const ratio = row(rows, 'ratio');
  assert.equal(ratio.verdict, 'better');
  assert.equal(ratio.agreeing, 3);
  assert.ok(Math.abs(ratio.change - 0.71 / 0.61) < 1e-9, 'the median of the per-pair changes');
  // CPU relative to the baseline's fell in two pairs and stayed put in one: not every pair agrees.
  assert.equal(row(rows, 'server CPU ÷ baseline').verdict, 'noise');
  assert.equal(row(rows, 'server CPU ÷ baseline').agreeing, 2);
  // p99 moved both ways.
  assert.equal(row(rows, 'p99 ms').verdict, 'noise');
  // A figure with baseline CPU is compared relative to it, never in absolute milliseconds.
  assert.equal(row(rows, 'server CPU ms/req'), undefined);
  assert.equal(row(rows, 'Postgres CPU ÷ baseline').verdict, 'noise');
});

test('a consistent move inside the base arm’s own spread is noise; a worse one is called worse', () => {
  const small = compare([
    { base: runOf({ ratio: 0.5, cpu: 0.5, p99: 40 }), head: runOf({ ratio: 0.52, cpu: 0.6, p99: 41 }) },
    { base: runOf({ ratio: 0.6, cpu: 0.5, p99: 40 }), head: runOf({ ratio: 0.61, cpu: 0.6, p99: 42 }) },
    { base: runOf({ ratio: 0.55, cpu: 0.5, p99: 40 }), head: runOf({ ratio: 0.56, cpu: 0.6, p99: 43 }) },
  ]);
  assert.equal(row(small, 'ratio').verdict, 'noise', 'ratio +2–4 % against a 20 % spread of the base');
  assert.equal(row(small, 'server CPU ÷ baseline').verdict, 'worse');
  assert.equal(row(small, 'p99 ms').verdict, 'worse', 'p99 rose in every pair and the base did not spread');
  assert.match(comparisonTable(small), /\*\*worse\*\* \(3\/3 pairs\)/);
});

test('fewer than three pairs get no verdict, however far they agree', () => {
  const two = compare([
    { base: runOf({ ratio: 0.5, cpu: 0.5, p99: 40 }), head: runOf({ ratio: 0.9, cpu: 0.2, p99: 10 }) },
    { base: runOf({ ratio: 0.5, cpu: 0.5, p99: 40 }), head: runOf({ ratio: 0.9, cpu: 0.2, p99: 10 }) },
  ]);
  assert.deepEqual(new Set(two.map((r) => r.verdict)), new Set(['too few pairs']));
});

test('figures missing from any run are left out', () => {
  const empty = { figures: [] };
  assert.deepEqual(compare([{ base: runOf({ ratio: 0.5, cpu: 0.5, p99: 1 }), head: empty }]), []);
});

test('whether the arms’ bench scripts differ is read from their files on disk, uncommitted changes included', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-fingerprint-'));
  try {
    const [a, b] = ['a', 'b'].map((arm) => {
      cpSync(join(root, 'bench'), join(dir, arm, 'bench'), {
        recursive: true,
        filter: (path) => !path.includes(join('bench', 'results')),
      });
      return join(dir, arm);
    });
    assert.equal(benchFingerprint(a), benchFingerprint(b));
    // Results are not code.
    mkdirSync(join(b, 'bench/results'), { recursive: true });
    writeFileSync(join(b, 'bench/results/latest.json'), '{}');
    assert.equal(benchFingerprint(a), benchFingerprint(b));
    appendFileSync(join(b, 'bench/lib/load.mjs'), '\n// an uncommitted edit\n');
    assert.notEqual(benchFingerprint(a), benchFingerprint(b));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('pnpm bench:ab runs alternating pairs and prints one comparison table', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-ab-'));
  try {
    const out = join(dir, 'ab.json');
    const args = ['bench:ab', '--base-dir', root, '--head-dir', root, '--pairs', '1', '--out', out];
    const ab = spawnSync('pnpm', [...args, '--', '--quick', '--only', 'aml'], {
      cwd: root,
      encoding: 'utf8',
      timeout: 110_000,
    });
    assert.equal(ab.status, 0, ab.stderr);
    assert.match(ab.stdout, /^\| figure +\| measure +\| base, per pair +\| head, per pair/m);
    assert.match(ab.stdout, /^\| AML screenings \(in-process\) +\| ratio \(higher is better\)/m);
    assert.match(ab.stderr, /pair 1\/1: base .*\n[\s\S]*pair 1\/1: head/, 'base first in an odd pair');
    assert.match(ab.stderr, / {2}\[head 1\] \[bench +\d+ s\] /, 'each run’s progress, marked with its arm');
    const result = JSON.parse(readFileSync(out, 'utf8'));
    assert.deepEqual(result.benchArgs, ['--quick', '--only', 'aml']);
    assert.equal(result.base.commit, result.head.commit);
    assert.equal(result.benchDiffers, false);
    const ratio = result.rows.find((r) => r.measure === 'ratio');
    assert.equal(ratio.key, 'aml.screen');
    assert.equal(ratio.base.length, 1);
    assert.equal(ratio.verdict, 'too few pairs');

    const refused = spawnSync('pnpm', [...args, '--', '--only', 'aml', '--runs', '3'], {
      cwd: root,
      encoding: 'utf8',
    });
    assert.equal(refused.status, 2);
    assert.match(refused.stderr, /--out and --runs belong to bench:ab itself/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
