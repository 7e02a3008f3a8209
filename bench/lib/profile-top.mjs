#!/usr/bin/env node
// Summarises a V8 CPU profile (BENCH_CPU_PROF=<dir> pnpm bench … writes one per product server):
// the functions with the most self time, the packages/files they live in, and the packages that caused
// the time of node's own functions (a socket write is charged to the pg, undici or ioredis frame that
// called it).
//
//   node bench/lib/profile-top.mjs <file.cpuprofile> [--top 25] [--busiest S [--with REGEX]]
//
// --busiest S keeps only the S seconds with the fewest idle samples: the measured point, without the
// start-up and the pauses between points. With --with REGEX, the S seconds with the most samples under a
// function whose name or file matches REGEX instead (one point of a bench that measures several, say
// `--with ApplicantsService` for the creates).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  options: { top: { type: 'string', default: '25' }, busiest: { type: 'string' }, with: { type: 'string' } },
  allowPositionals: true,
});
const profile = JSON.parse(readFileSync(positionals[0], 'utf8'));
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

const pattern = values.with ? new RegExp(values.with) : null;
const under = new Map();
/** Whether a sample is left out of the window's score: idle, or (with --with) not under a matching frame. */
const leftOut = (id) => {
  if (!pattern) return nodes.get(id).callFrame.functionName === '(idle)';
  if (!under.has(id)) {
    const { functionName, url } = nodes.get(id).callFrame;
    const up = parent.get(id);
    under.set(
      id,
      (pattern.test(`${functionName} ${url}:${nodes.get(id).callFrame.lineNumber + 1}`) &&
        functionName !== '') ||
        (up !== undefined && !leftOut(up)),
    );
  }
  return !under.get(id);
};
const [from, to] = values.busiest ? busiestWindow(Number(values.busiest) * 1e6) : [0, profile.samples.length];

const dt = new Map();
for (let i = from; i < to; i++)
  dt.set(profile.samples[i], (dt.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i] ?? 0));
const total = [...dt.values()].reduce((a, b) => a + b, 0);
const byFn = new Map();
const byPkg = new Map();
const byCaller = new Map();
const inclusive = new Map();
const add = (m, k, t) => m.set(k, (m.get(k) ?? 0) + t);
for (const [id, t] of dt) {
  const { functionName, url, lineNumber } = nodes.get(id).callFrame;
  add(byFn, `${functionName || '(anonymous)'} ${where(url)}:${lineNumber + 1}`, t);
  const pkg = packageOf(nodes.get(id));
  add(byPkg, pkg, t);
  add(byCaller, pkg === 'node internals' ? `${callingPackage(id)} (via node)` : pkg, t);
  const seen = new Set();
  for (let up = id; up !== undefined; up = parent.get(up)) {
    const frame = nodes.get(up).callFrame;
    if (!frame.url.startsWith('file://') || frame.functionName === '') continue;
    const name = `${frame.functionName} ${where(frame.url)}:${frame.lineNumber + 1}`;
    if (!seen.has(name)) add(inclusive, name, t);
    seen.add(name);
  }
}

/** The [from, to) sample range of `span` µs with the most time outside idle (or under --with). */
function busiestWindow(span) {
  const at = [];
  let clock = 0;
  for (const delta of profile.timeDeltas) at.push((clock += delta));
  let best = [0, profile.samples.length];
  let bestBusy = -1;
  let busy = 0;
  let start = 0;
  for (let end = 0; end < at.length; end++) {
    if (!leftOut(profile.samples[end])) busy += profile.timeDeltas[end];
    while (at[end] - at[start] >= span) {
      if (!leftOut(profile.samples[start])) busy -= profile.timeDeltas[start];
      start++;
    }
    if (busy > bestBusy) {
      bestBusy = busy;
      best = [start, end + 1];
    }
  }
  return best;
}

function where(url) {
  return url.replace(/^file:\/\//, '').replace(/.*node_modules\/\.pnpm\/[^/]+\/node_modules\//, '');
}

function packageOf(node) {
  const { functionName, url } = node.callFrame;
  if (url.includes('node_modules'))
    return where(url)
      .split('/')
      .slice(0, where(url).startsWith('@') ? 2 : 1)
      .join('/');
  if (url.startsWith('node:') || url === '')
    return functionName.startsWith('(') ? functionName : 'node internals';
  return where(url)
    .replace(/.*\/(apps|libs)\//, '$1/')
    .split('/')
    .slice(0, 2)
    .join('/');
}

/** The nearest caller of a node-internal frame that is not node's own code. */
function callingPackage(id) {
  for (let up = parent.get(id); up !== undefined; up = parent.get(up)) {
    const pkg = packageOf(nodes.get(up));
    if (pkg !== 'node internals' && !pkg.startsWith('(')) return pkg;
  }
  return 'node internals';
}

const top = (m) =>
  [...m.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, Number(values.top))
    .map(([k, t]) => `${((t / total) * 100).toFixed(1).padStart(5)} %  ${k}`)
    .join('\n');
console.log(
  [
    `total ${(total / 1000).toFixed(0)} ms sampled${values.busiest ? ` (the busiest ${values.busiest} s)` : ''}`,
    `self time by package/area:\n${top(byPkg)}`,
    `self time by package, node's own functions charged to the package that called them:\n${top(byCaller)}`,
    `self time by function:\n${top(byFn)}`,
    `inclusive time of the product's and its packages' named functions (synchronous part of each call):\n${top(inclusive)}`,
  ].join('\n\n'),
);
