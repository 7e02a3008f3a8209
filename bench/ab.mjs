#!/usr/bin/env node
// `pnpm bench:ab`: measures a change against the build before it, in alternating runs on the same machine,
// and prints one table of what moved (bench/lib/ab-compare.mjs). How the decisions' before-and-after
// figures are taken, as one command:
//
//   pnpm bench:ab --base REF [--head REF] [--pairs 3] [--out FILE] -- [pnpm bench options]
//   pnpm bench:ab --clean
//
// Each arm is a git commit built in a worktree of its own under the system's temporary directory (kept and
// reused: a second comparison against the same commit starts at once). Without --head, the head arm is this
// checkout as it is, uncommitted changes included, rebuilt first (turbo's cache makes that quick).
// --base-dir / --head-dir take an already built checkout instead of a commit. Pairs run in the order
// base-head, head-base, base-head, …, so a machine that speeds up or slows down over the session weighs on
// both arms alike. Each arm runs its own bench/run.mjs; when bench/ differs between the arms the header says
// so. --clean removes the worktrees.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { compare, comparisonTable } from './lib/ab-compare.mjs';
import { root } from './lib/proc.mjs';
import { benchFingerprint } from './lib/provenance.mjs';
import { progress } from './lib/report.mjs';

const USAGE = `usage: pnpm bench:ab --base REF [--head REF] [--pairs N] [--out FILE] -- [pnpm bench options]
       pnpm bench:ab --clean

  --base REF        the commit to compare against (built in a worktree of its own)
  --head REF        the commit to measure  [this checkout as it is, rebuilt]
  --base-dir DIR    an already built checkout as the base arm, instead of --base
  --head-dir DIR    an already built checkout as the head arm, instead of --head
  --pairs N         alternating pairs of runs  [3]
  --out FILE        the comparison as JSON  [bench/results/ab.json]
  --clean           remove the worktrees this command made, and stop
  after --           options for every run of bench/run.mjs, e.g. --only custody --no-preload --connections 10,50`;

const WORKTREES = join(tmpdir(), 'tessera-bench-ab');
// Inside node_modules, which every ref ignores: a marker at the top would make the worktree look modified.
const READY = join('node_modules', '.bench-ab-ready');

function fail(message) {
  console.error(`bench:ab: ${message}\n\n${USAGE}`);
  process.exit(2);
}

const git = (args, cwd = root) => {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr.trim()}`);
  return r.stdout.trim();
};

/** Runs a command with its output on stderr (it is progress, not the result), and fails on a non-zero exit. */
function run(command, args, cwd) {
  const r = spawnSync(command, args, { cwd, stdio: ['ignore', process.stderr, process.stderr] });
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} (in ${cwd}) exited with ${r.status}`);
}

/** A commit, built in its own worktree (once: the worktree is reused while it is marked ready). */
function commitArm(label, ref) {
  const sha = git(['rev-parse', '--verify', `${ref}^{commit}`]);
  const dir = join(WORKTREES, sha.slice(0, 12));
  if (!existsSync(join(dir, READY))) {
    progress(`${label}: building ${ref} (${sha.slice(0, 12)}) in ${dir}`);
    if (existsSync(dir)) spawnSync('git', ['worktree', 'remove', '--force', dir], { cwd: root });
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(WORKTREES, { recursive: true });
    git(['worktree', 'add', '--detach', dir, sha]);
    run('pnpm', ['install', '--frozen-lockfile', '--prefer-offline'], dir);
    run('pnpm', ['build'], dir);
    writeFileSync(join(dir, READY), `${sha}\n`);
  } else progress(`${label}: ${ref} (${sha.slice(0, 12)}), built before in ${dir}`);
  return { label, dir, commit: sha, dirty: false, ref };
}

/** A checkout as it is (uncommitted changes included); `build` rebuilds it first. */
function checkoutArm(label, dir, build) {
  if (!existsSync(join(dir, 'bench/run.mjs'))) fail(`${dir} is not a Tessera checkout`);
  if (build) {
    progress(`${label}: rebuilding ${dir}`);
    run('pnpm', ['build'], dir);
  }
  const commit = git(['rev-parse', 'HEAD'], dir);
  const dirty = git(['status', '--porcelain', '--untracked-files=no'], dir) !== '';
  return { label, dir, commit, dirty, ref: dir };
}

/** One run of an arm's own bench: its progress goes to stderr with the arm's name, its table is dropped. */
function benchRun(arm, benchArgs, out, tag) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [join(arm.dir, 'bench/run.mjs'), ...benchArgs, '--out', out], {
      cwd: arm.dir,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let pending = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk) => {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop();
      for (const line of lines) if (line) process.stderr.write(`  ${tag} ${line}\n`);
    });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0
        ? resolvePromise(JSON.parse(readFileSync(out, 'utf8')))
        : reject(new Error(`${tag} exited with ${code}`)),
    );
  });
}

const split = process.argv.indexOf('--');
const ownArgs = split === -1 ? process.argv.slice(2) : process.argv.slice(2, split);
const benchArgs = split === -1 ? [] : process.argv.slice(split + 1);
let values;
try {
  ({ values } = parseArgs({
    args: ownArgs,
    options: {
      base: { type: 'string' },
      head: { type: 'string' },
      'base-dir': { type: 'string' },
      'head-dir': { type: 'string' },
      pairs: { type: 'string', default: '3' },
      out: { type: 'string' },
      clean: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  }));
} catch (err) {
  fail(err.message);
}
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
if (values.clean) {
  if (existsSync(WORKTREES)) {
    for (const entry of readdirSync(WORKTREES))
      spawnSync('git', ['worktree', 'remove', '--force', join(WORKTREES, entry)], { cwd: root });
    rmSync(WORKTREES, { recursive: true, force: true });
  }
  git(['worktree', 'prune']);
  console.log(`removed ${WORKTREES}`);
  process.exit(0);
}
const pairs = Number(values.pairs);
if (!Number.isInteger(pairs) || pairs < 1)
  fail(`--pairs must be a positive whole number, not "${values.pairs}"`);
if (!values.base === !values['base-dir']) fail('give one of --base REF and --base-dir DIR');
if (values.head && values['head-dir']) fail('give at most one of --head REF and --head-dir DIR');
if (benchArgs.includes('--out') || benchArgs.includes('--runs'))
  fail('--out and --runs belong to bench:ab itself (every run of an arm is one pair member)');

const base = values.base
  ? commitArm('base', values.base)
  : checkoutArm('base', resolve(values['base-dir']), false);
const head = values.head
  ? commitArm('head', values.head)
  : checkoutArm('head', values['head-dir'] ? resolve(values['head-dir']) : root, !values['head-dir']);
// Each arm's bench scripts as they are on disk (a --base-dir or --head-dir with uncommitted changes included).
const benchDiffers = base.dir !== head.dir && benchFingerprint(base.dir) !== benchFingerprint(head.dir);

const scratch = join(tmpdir(), `tessera-bench-ab-runs-${process.pid}`);
mkdirSync(scratch, { recursive: true });
const results = [];
const started = new Date();
try {
  for (let i = 1; i <= pairs; i += 1) {
    const order = i % 2 ? [base, head] : [head, base];
    const pair = {};
    for (const arm of order) {
      progress(
        `pair ${i}/${pairs}: ${arm.label} (${arm.commit.slice(0, 12)}${arm.dirty ? ', uncommitted changes' : ''})`,
      );
      pair[arm.label] = await benchRun(
        arm,
        benchArgs,
        join(scratch, `${arm.label}-${i}.json`),
        `[${arm.label} ${i}]`,
      );
    }
    results.push(pair);
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

const rows = compare(results);
const describe = (arm) =>
  `${arm.commit.slice(0, 12)}${arm.dirty ? ' with uncommitted changes' : ''} (${arm.ref})`;
console.log(
  `pnpm bench:ab: ${pairs} pair(s), ${started.toISOString()}; bench options: ${benchArgs.join(' ') || '(defaults)'}`,
);
console.log(`base ${describe(base)}; head ${describe(head)}`);
if (benchDiffers)
  console.log('bench/ differs between the arms: each arm was measured by its own bench scripts');
console.log(comparisonTable(rows));
const out = values.out ?? join(root, 'bench/results/ab.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(
  out,
  `${JSON.stringify(
    {
      startedAt: started.toISOString(),
      finishedAt: new Date().toISOString(),
      benchArgs,
      base: { commit: base.commit, dirty: base.dirty, ref: base.ref },
      head: { commit: head.commit, dirty: head.dirty, ref: head.ref },
      benchDiffers,
      rows,
      runs: results.map((p) => ({ base: p.base.machine, head: p.head.machine })),
    },
    null,
    2,
  )}\n`,
);
progress(`wrote ${out}`);
