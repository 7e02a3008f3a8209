// The scale curves of a run as SVG (vega-lite compiled to vega, rendered headless by vega's own SVG renderer):
//   docs/images/performance/scale-throughput.svg  req/s (deliveries/s) against connections, per figure: the
//                                                  product on empty tables, with 1M rows preloaded, and the
//                                                  same-run baseline;
//   docs/images/performance/scale-cpu.svg          server CPU ms per request against connections, same lines;
//   docs/images/performance/scale-p99.svg          p99 latency against connections (HTTP figures).
// `pnpm bench --chart` writes them from the run's figures; `node bench/lib/chart.mjs [latest.json]` from a file.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { root } from './proc.mjs';

const require = createRequire(join(root, 'package.json'));

const SERIES = {
  create: 'POST /v1/applicants',
  status: 'GET /v1/applicants/{id}/status',
  transfer: 'custody transfer (10 hot wallets)',
  delivery: 'webhook deliveries',
};

/** Chart rows: one per (series, connections, line). */
export function curveRows(figures) {
  const rows = [];
  for (const f of figures) {
    if (!SERIES[f.series] || f.connections == null) continue;
    const preloaded = f.rows !== 'empty';
    rows.push({
      series: SERIES[f.series],
      connections: f.connections,
      line: preloaded
        ? `product, ${f.rows >= 1e6 ? `${f.rows / 1e6}M` : f.rows} rows preloaded`
        : 'product, empty tables',
      value: f.value,
      cpuMsPerReq: f.cpuMsPerReq,
      p99Ms: f.p99Ms,
    });
    if (!preloaded && f.baseline != null)
      rows.push({
        series: SERIES[f.series],
        connections: f.connections,
        line: `baseline (${f.baselineLabel})`,
        value: f.baseline,
        cpuMsPerReq: f.baselineCpuMsPerReq,
        p99Ms: f.baselineP99Ms,
      });
  }
  return rows;
}

function spec(rows, field, title) {
  // One colour per line in every chart, whichever lines a chart has data for.
  const lines = [...new Set(rows.map((r) => r.line))].sort();
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    data: { values: rows.filter((r) => r[field] != null && Number.isFinite(r[field])) },
    facet: { field: 'series', type: 'nominal', title: null, header: { labelFontSize: 12 } },
    columns: 2,
    resolve: { scale: { y: 'independent' } },
    title: { text: title, fontSize: 14 },
    spec: {
      width: 260,
      height: 170,
      mark: { type: 'line', point: true },
      encoding: {
        x: {
          field: 'connections',
          type: 'quantitative',
          scale: { type: 'log', domain: [8, 250] },
          axis: { values: [10, 50, 200] },
          title: 'connections',
        },
        y: { field, type: 'quantitative', title: null, scale: { zero: true } },
        color: {
          field: 'line',
          type: 'nominal',
          title: null,
          scale: { domain: lines },
          legend: { orient: 'bottom', columns: 1, labelLimit: 400 },
        },
        strokeDash: { field: 'line', type: 'nominal', title: null, scale: { domain: lines } },
      },
    },
    config: { background: 'white', font: 'sans-serif' },
  };
}

async function svg(vlSpec) {
  const vl = await import(require.resolve('vega-lite'));
  const vega = await import(require.resolve('vega'));
  const compiled = (vl.compile ?? vl.default.compile)(vlSpec).spec;
  const V = vega.View ? vega : vega.default;
  const view = new V.View(V.parse(compiled), { renderer: 'none' });
  const out = await view.toSVG();
  view.finalize();
  return out;
}

/** Writes the charts of these figures; returns the files written. */
export async function renderCharts(figures, dir = join(root, 'docs/images/performance')) {
  const rows = curveRows(figures);
  if (rows.length === 0) return [];
  mkdirSync(dir, { recursive: true });
  const files = [];
  for (const [name, field, title] of [
    ['scale-throughput', 'value', 'Throughput (req/s; deliveries/s) against connections'],
    ['scale-cpu', 'cpuMsPerReq', 'Server CPU ms per request against connections'],
    ['scale-p99', 'p99Ms', 'p99 latency (ms) against connections'],
  ]) {
    const file = join(dir, `${name}.svg`);
    writeFileSync(file, await svg(spec(rows, field, title)));
    files.push(file);
  }
  return files;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = process.argv[2] ?? join(root, 'bench/results/latest.json');
  for (const f of await renderCharts(JSON.parse(readFileSync(file, 'utf8')).figures))
    console.log(`wrote ${f}`);
}
