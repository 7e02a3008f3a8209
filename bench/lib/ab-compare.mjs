// The comparison behind `pnpm bench:ab` (bench/ab.mjs): the figures of two builds, measured in alternating
// runs, set side by side pair by pair. A change counts only when there are at least three pairs, every pair
// moved the same way and the median move is larger than the base arm's own spread; anything else is noise.

/**
 * What is compared for every figure. Each measure is read from one run's figure; `better` says which way is
 * an improvement. CPU is compared relative to the same run's baseline where the figure has one, because the
 * absolute CPU per request moves with the machine from one run to the next (docs/performance.md).
 */
export const MEASURES = [
  { name: 'ratio', better: 'higher', read: (f) => f.ratio, format: (v) => `${(v * 100).toFixed(1)} %` },
  {
    name: 'server CPU ÷ baseline',
    better: 'lower',
    read: (f) => (f.baselineCpuMsPerReq ? f.cpuMsPerReq / f.baselineCpuMsPerReq : null),
    format: (v) => `${v.toFixed(2)}×`,
  },
  {
    name: 'server CPU ms/req',
    better: 'lower',
    // Only where there is no baseline CPU to divide by (the custody worker, the media and chain figures).
    read: (f) => (f.baselineCpuMsPerReq ? null : f.cpuMsPerReq),
    format: (v) => v.toFixed(3),
  },
  {
    name: 'Postgres CPU ÷ baseline',
    better: 'lower',
    read: (f) =>
      f.baselinePostgresCpuMsPerReq ? f.postgresCpuMsPerReq / f.baselinePostgresCpuMsPerReq : null,
    format: (v) => `${v.toFixed(2)}×`,
  },
  {
    name: 'Postgres CPU ms/req',
    better: 'lower',
    read: (f) => (f.baselinePostgresCpuMsPerReq ? null : f.postgresCpuMsPerReq),
    format: (v) => v.toFixed(3),
  },
  { name: 'p99 ms', better: 'lower', read: (f) => f.p99Ms, format: (v) => v.toFixed(1) },
];

/** Fewer pairs than this get no verdict: one or two pairs that agree say little on a shared machine. */
export const MIN_PAIRS = 3;

const usable = (v) => typeof v === 'number' && Number.isFinite(v) && v > 0;

export const median = (values) => {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

/** (max − min) ÷ median: how far one arm's own runs spread. */
const relativeSpread = (values) => (Math.max(...values) - Math.min(...values)) / median(values);

/**
 * One row per figure and measure present in every run of both arms.
 * `pairs`: [{ base, head }], each a results file of bench/run.mjs (`figures` with `key` and the measures).
 * A row: { key, figure, measure, better, base: [..], head: [..], changes: [head ÷ base per pair],
 *          change (median), agreeing (pairs that moved the median's way),
 *          verdict: better | worse | noise | 'too few pairs' }.
 */
export function compare(pairs) {
  const byKey = (results) => new Map(results.figures.map((f) => [f.key, f]));
  const maps = pairs.map(({ base, head }) => ({ base: byKey(base), head: byKey(head) }));
  const keys = [...maps[0].base.keys()].filter((k) => maps.every((m) => m.base.has(k) && m.head.has(k)));
  const rows = [];
  for (const key of keys) {
    for (const measure of MEASURES) {
      const base = maps.map((m) => measure.read(m.base.get(key)));
      const head = maps.map((m) => measure.read(m.head.get(key)));
      if (!base.every(usable) || !head.every(usable)) continue;
      const changes = base.map((b, i) => head[i] / b);
      const change = median(changes);
      const up = change > 1;
      const agreeing = changes.filter((c) => (up ? c > 1 : c < 1)).length;
      const beyondSpread = Math.abs(change - 1) > relativeSpread(base);
      const improved = measure.better === 'higher' ? up : !up;
      const verdict =
        changes.length < MIN_PAIRS
          ? 'too few pairs'
          : change !== 1 && agreeing === changes.length && beyondSpread
            ? improved
              ? 'better'
              : 'worse'
            : 'noise';
      rows.push({
        key,
        figure: maps[0].base.get(key).figure,
        measure: measure.name,
        better: measure.better,
        base,
        head,
        changes,
        change,
        agreeing,
        verdict,
      });
    }
  }
  return rows;
}

const signed = (change) => `${change >= 1 ? '+' : '−'}${(Math.abs(change - 1) * 100).toFixed(1)} %`;

/** The comparison as one markdown table: every pair's value in each arm, the median move and the verdict. */
export function comparisonTable(rows) {
  const format = new Map(MEASURES.map((m) => [m.name, m.format]));
  const header = [
    'figure',
    'measure',
    'base, per pair',
    'head, per pair',
    'change (median; per pair)',
    'verdict',
  ];
  const body = rows.map((r) => {
    const f = format.get(r.measure);
    return [
      r.figure,
      `${r.measure} (${r.better} is better)`,
      r.base.map(f).join(' / '),
      r.head.map(f).join(' / '),
      `${signed(r.change)} (${r.changes.map(signed).join(', ')})`,
      r.verdict === 'better' || r.verdict === 'worse'
        ? `**${r.verdict}** (${r.agreeing}/${r.changes.length} pairs)`
        : r.verdict,
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...body.map(line)].join('\n');
}
