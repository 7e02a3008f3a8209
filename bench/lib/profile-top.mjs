#!/usr/bin/env node
// Summarises a V8 CPU profile (BENCH_CPU_PROF=<dir> pnpm bench … writes one per product server):
// the functions with the most self time, and the packages/files they live in.
//
//   node bench/lib/profile-top.mjs <file.cpuprofile> [--top 25]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  options: { top: { type: 'string', default: '25' } },
  allowPositionals: true,
});
const profile = JSON.parse(readFileSync(positionals[0], 'utf8'));
const dt = new Map();
for (let i = 0; i < profile.samples.length; i++)
  dt.set(profile.samples[i], (dt.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i] ?? 0));
const total = [...dt.values()].reduce((a, b) => a + b, 0);
const byFn = new Map();
const byPkg = new Map();
for (const node of profile.nodes) {
  const t = dt.get(node.id) ?? 0;
  if (!t) continue;
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url.replace(/^file:\/\//, '').replace(/.*node_modules\/\.pnpm\/[^/]+\/node_modules\//, '');
  const fn = `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`;
  byFn.set(fn, (byFn.get(fn) ?? 0) + t);
  const pkg = url.includes('node_modules')
    ? where
        .split('/')
        .slice(0, where.startsWith('@') ? 2 : 1)
        .join('/')
    : url.startsWith('node:') || url === ''
      ? functionName.startsWith('(')
        ? functionName
        : 'node internals'
      : where
          .replace(/.*\/(apps|libs)\//, '$1/')
          .split('/')
          .slice(0, 2)
          .join('/');
  byPkg.set(pkg, (byPkg.get(pkg) ?? 0) + t);
}
const top = (m) =>
  [...m.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, Number(values.top))
    .map(([k, t]) => `${((t / total) * 100).toFixed(1).padStart(5)} %  ${k}`)
    .join('\n');
console.log(
  `total ${(total / 1000).toFixed(0)} ms sampled\n\nself time by package/area:\n${top(byPkg)}\n\nself time by function:\n${top(byFn)}`,
);
