// Figures, their goals, the one table and bench/results/latest.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

const started = Date.now();
let quiet = false;
export const setQuiet = (q) => (quiet = q);

/** A progress line on stderr, with the seconds since the run started. */
export function progress(message) {
  if (!quiet)
    process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${message}\n`);
}

/**
 * One figure of a bench. `value` is in `unit`; `baseline` is the same-run baseline's value in the same unit
 * (or, for preloaded-table figures, the empty-table run's value). `goal` is checked here:
 *   ratioAtLeast: value / baseline >= x (higher is better units), or baseline / value >= x (`lowerIsBetter`)
 *   valueAtMost:  value <= x (latencies); valueAtLeast: value >= x (absolute floors)
 *   p99AtMost:    p99Ms <= x;  p99AtMostBaselineTimes: p99Ms <= x × baselineP99Ms
 *   zeroAnomalies: anomalies === 0
 */
export function figure(f) {
  const rawRatio =
    f.baseline == null || !Number.isFinite(f.baseline) || f.baseline === 0
      ? null
      : f.lowerIsBetter
        ? f.baseline / f.value
        : f.value / f.baseline;
  const ratio = f.ratioOverride != null ? f.ratioOverride : rawRatio;
  const goal = f.goal ?? null;
  let met = null;
  if (goal) {
    const checks = [];
    if (goal.ratioAtLeast != null) checks.push(ratio != null && ratio >= goal.ratioAtLeast);
    if (goal.valueAtMost != null) checks.push(f.value <= goal.valueAtMost);
    if (goal.valueAtLeast != null) checks.push(f.value >= goal.valueAtLeast);
    if (goal.p99AtMost != null) checks.push(f.p99Ms != null && f.p99Ms <= goal.p99AtMost);
    if (goal.p99AtMostBaselineTimes != null)
      checks.push(
        f.p99Ms != null &&
          f.baselineP99Ms != null &&
          f.p99Ms <= goal.p99AtMostBaselineTimes * f.baselineP99Ms,
      );
    if (goal.zeroAnomalies) checks.push(f.anomalies === 0);
    // A figure whose load saw non-2xx answers or errors never meets its goal.
    if (f.failures) checks.push(false);
    met = checks.every(Boolean);
  }
  const { ratioOverride: _override, ...rest } = f;
  return { ...rest, rawRatio, ratio, met, cpuBudget: cpuBudget(f) };
}

/** A figure's numbers beside its baseline's, both `measure` results (load.mjs): the fields `figure` takes. */
export function against(r, base, baselineLabel) {
  return {
    value: r.reqPerSec,
    baseline: base.reqPerSec,
    baselineLabel,
    p50Ms: r.p50Ms,
    p99Ms: r.p99Ms,
    baselineP99Ms: base.p99Ms,
    cpuMsPerReq: r.cpuMsPerReq,
    baselineCpuMsPerReq: base.cpuMsPerReq,
    postgresCpuMsPerReq: r.postgresCpuMsPerReq,
    baselinePostgresCpuMsPerReq: base.postgresCpuMsPerReq,
    anomalies: r.anomalies,
    failures: r.failures,
  };
}

/**
 * The CPU a ratio goal leaves per request: at the goal's rate (ratioAtLeast × the same-run baseline, per
 * second), the server CPU per request at which that rate costs exactly one core, 1,000 ms / rate. One Node
 * process cannot spend more than one core, so a single-process product whose CPU per request is above this
 * cannot meet the goal however its waits are arranged. Null for figures without such a goal, without a CPU
 * reading, or compared with the product itself (the preloaded-table figures, against the empty tables).
 */
function cpuBudget(f) {
  const rate = f.goal?.ratioAtLeast != null && !f.lowerIsBetter ? f.goal.ratioAtLeast * f.baseline : null;
  if (!rate || !Number.isFinite(rate) || typeof f.rows === 'number' || f.cpuMsPerReq == null) return null;
  return 1000 / rate;
}

/** One line per figure that missed its ratio goal and spends more CPU per request than the goal leaves. */
export function budgetLines(figures) {
  const over = figures.filter((f) => f.met === false && f.cpuBudget != null && f.cpuMsPerReq > f.cpuBudget);
  if (over.length === 0) return [];
  return [
    'CPU budget of the missed ratio goals (server CPU per request at which the goal rate costs one whole core):',
    ...over.map(
      (f) =>
        `  ${f.figure}: goal ${num(1000 / f.cpuBudget)} ${f.unit}, budget ${f.cpuBudget.toFixed(3)} ` +
        `CPU ms/${f.cpuPer ?? 'req'}, now ${f.cpuMsPerReq.toFixed(3)} (${(f.cpuMsPerReq / f.cpuBudget).toFixed(2)}× over)` +
        (f.postgresCpuMsPerReq != null && Number.isFinite(f.postgresCpuMsPerReq)
          ? `; Postgres adds ${pair(f.postgresCpuMsPerReq, f.baselinePostgresCpuMsPerReq)} (figure / baseline) on the same cores`
          : ''),
    ),
  ];
}

/** The goal as the table prints it. */
export function goalText(goal) {
  if (!goal) return '';
  const parts = [];
  if (goal.ratioAtLeast != null) parts.push(`≥ ${Math.round(goal.ratioAtLeast * 100)} %`);
  if (goal.valueAtMost != null) parts.push(`≤ ${goal.valueAtMost}${goal.unit ? ` ${goal.unit}` : ''}`);
  if (goal.valueAtLeast != null) parts.push(`≥ ${goal.valueAtLeast}${goal.unit ? ` ${goal.unit}` : ''}`);
  if (goal.p99AtMost != null) parts.push(`p99 ≤ ${goal.p99AtMost} ms`);
  if (goal.p99AtMostBaselineTimes != null) parts.push(`p99 ≤ ${goal.p99AtMostBaselineTimes}×`);
  if (goal.zeroAnomalies) parts.push('0 anomalies');
  return parts.join(', ');
}

const median = (xs) => {
  const s = xs.filter((x) => x != null && Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return null;
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const spread = (xs) => {
  const s = xs.filter((x) => x != null && Number.isFinite(x));
  return s.length ? { median: median(s), min: Math.min(...s), max: Math.max(...s) } : null;
};

/** Figures of N runs (same keys) folded into median and min–max of every number; met on the medians. */
export function aggregate(runs) {
  const byKey = new Map();
  for (const figures of runs)
    for (const f of figures) {
      if (!byKey.has(f.key)) byKey.set(f.key, []);
      byKey.get(f.key).push(f);
    }
  return [...byKey.values()].map((list) => {
    const first = list[0];
    const stat = (k) => spread(list.map((f) => f[k]));
    const med = (k) => stat(k)?.median ?? null;
    // Goals are judged on the median of each run's own ratio (what the table prints), not on a ratio of medians.
    const folded = figure({
      ...first,
      ratioOverride: med('ratio'),
      value: med('value'),
      baseline: med('baseline'),
      p50Ms: med('p50Ms'),
      p99Ms: med('p99Ms'),
      baselineP99Ms: med('baselineP99Ms'),
      cpuMsPerReq: med('cpuMsPerReq'),
      baselineCpuMsPerReq: med('baselineCpuMsPerReq'),
      postgresCpuMsPerReq: med('postgresCpuMsPerReq'),
      baselinePostgresCpuMsPerReq: med('baselinePostgresCpuMsPerReq'),
      failures: list.reduce((n, f) => n + (f.failures ?? 0), 0),
      anomalies: list.some((f) => f.anomalies != null)
        ? list.reduce((n, f) => n + (f.anomalies ?? 0), 0)
        : undefined,
    });
    return {
      ...folded,
      // The ratio's median over runs (each run's ratio is against its own baseline), not the ratio of medians.
      ratio: med('ratio') ?? folded.ratio,
      runs: list.length,
      metRuns: list.filter((f) => f.met).length,
      spread: {
        value: stat('value'),
        baseline: stat('baseline'),
        ratio: stat('ratio'),
        p99Ms: stat('p99Ms'),
        cpuMsPerReq: stat('cpuMsPerReq'),
        postgresCpuMsPerReq: stat('postgresCpuMsPerReq'),
      },
      perRun: list.map(
        ({ key, value, baseline, ratio, p99Ms, cpuMsPerReq, postgresCpuMsPerReq, met, anomalies }) => ({
          key,
          value,
          baseline,
          ratio,
          anomalies,
          p99Ms,
          cpuMsPerReq,
          postgresCpuMsPerReq,
          met,
        }),
      ),
    };
  });
}

const num = (x, unit) => {
  if (x == null || !Number.isFinite(x)) return '–';
  const digits = Math.abs(x) >= 100 ? 0 : Math.abs(x) >= 10 ? 1 : 2;
  return `${x.toFixed(digits)}${unit ? ` ${unit}` : ''}`;
};
const withSpread = (x, s, unit, fmt = num) =>
  s && s.min !== s.max ? `${fmt(x, unit)} (${fmt(s.min)}–${fmt(s.max)})` : fmt(x, unit);
const pct = (x) =>
  x == null || !Number.isFinite(x)
    ? '–'
    : x < 0.1
      ? `${(x * 100).toPrecision(2)} %`
      : `${Math.round(x * 100)} %`;

/** "figure / baseline" CPU ms, or "figure" alone, or nothing. */
const pair = (x, baseline) =>
  x == null || !Number.isFinite(x)
    ? ''
    : `${x.toFixed(3)}${baseline != null && Number.isFinite(baseline) ? ` / ${baseline.toFixed(3)}` : ''}`;

/** The one table (markdown, so docs/performance.md can quote it as printed). */
export function table(figures) {
  const rows = figures.map((f) => {
    const met =
      f.met == null
        ? ''
        : f.runs > 1
          ? `${f.met ? 'yes' : 'NO'} (${f.metRuns}/${f.runs})`
          : f.met
            ? 'yes'
            : 'NO';
    const cpu =
      f.cpuMsPerReq == null
        ? ''
        : `${pair(f.cpuMsPerReq, f.baselineCpuMsPerReq)}${f.cpuPer ? ` per ${f.cpuPer}` : ''}`;
    const postgres = pair(f.postgresCpuMsPerReq, f.baselinePostgresCpuMsPerReq);
    const extra = [];
    if (f.p99Ms != null && f.unit !== 'ms') extra.push(`p99 ${num(f.p99Ms)} ms`);
    if (f.anomalies != null) extra.push(`${f.anomalies} anomalies`);
    if (f.failures) extra.push(`${f.failures} non-2xx/errors`);
    return [
      f.figure,
      `${withSpread(f.value, f.spread?.value, f.unit)}${extra.length ? `, ${extra.join(', ')}` : ''}`,
      f.baseline == null
        ? '–'
        : `${withSpread(f.baseline, f.spread?.baseline, f.unit)} ${f.baselineLabel ?? ''}`.trim(),
      withSpread(f.ratio, f.spread?.ratio, '', pct),
      goalText(f.goal),
      met,
      cpu,
      postgres,
    ];
  });
  const head = [
    'figure',
    'value',
    'baseline',
    'ratio',
    'goal',
    'met',
    'CPU ms/req (server / baseline)',
    'Postgres CPU ms/req (figure / baseline)',
  ];
  const all = [head, ...rows];
  const widths = head.map((_, i) => Math.max(...all.map((r) => String(r[i]).length)));
  const line = (r) => `| ${r.map((c, i) => String(c).padEnd(widths[i])).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

export function writeJson(path, data) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(data, null, 2)}\n`);
}

/** "1M rows", "20k rows": how the table names a preloaded table size. */
export const rowsLabel = (n) =>
  n >= 1e6 && n % 1e6 === 0 ? `${n / 1e6}M rows` : n >= 1000 ? `${Math.round(n / 1000)}k rows` : `${n} rows`;
