#!/usr/bin/env node
// Bench: the cost of the media checks' inspections (decision 0133), in-process, beside a same-run baseline
// that streams the same bytes through sha256 (the floor of reading them at all):
//   - image: a 1600x1200 photo-like JPEG decoded in full by sharp (identity_doc, selfie, poa);
//   - clip: a 10 s 320x240 WebM written to a temporary file and its duration read by ffprobe (liveness).
// Prints inspections/s, wall and CPU ms per inspection (this process; ffprobe's own CPU is a child's) and the
// ratio to the baseline, per run and as min-max over runs.
//
//   pnpm build && node bench/media-checks.mjs [--seconds 3] [--runs 3]
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const appRequire = createRequire(join(here, '../apps/verification-api/package.json'));
const { values: args } = parseArgs({
  options: { seconds: { type: 'string', default: '3' }, runs: { type: 'string', default: '3' } },
});

const sharp = appRequire('sharp');
const { MediaInspectorService } = appRequire('./dist/modules/checks/media-inspector.service');
const inspector = new MediaInspectorService({ FFPROBE_PATH: process.env.FFPROBE_PATH ?? 'ffprobe' });

const image = await sharp({
  create: {
    width: 1600,
    height: 1200,
    channels: 3,
    background: '#808080',
    noise: { type: 'gaussian', mean: 128, sigma: 40 },
  },
})
  .jpeg({ quality: 85 })
  .toBuffer();
const dir = mkdtempSync(join(tmpdir(), 'bench-media-'));
let clip;
try {
  const file = join(dir, 'clip.webm');
  execFileSync('ffmpeg', [
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    'testsrc=s=320x240:r=15',
    '-t',
    '10',
    '-c:v',
    'libvpx',
    '-b:v',
    '200k',
    file,
  ]);
  clip = readFileSync(file);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const chunks = (bytes) =>
  Readable.from([bytes.subarray(0, bytes.length >> 1), bytes.subarray(bytes.length >> 1)]);
const baseline = async (bytes) => {
  const hash = createHash('sha256');
  for await (const chunk of chunks(bytes)) hash.update(chunk);
  hash.digest();
};

async function measure(fn) {
  const deadline = Date.now() + Number(args.seconds) * 1000;
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  let n = 0;
  while (Date.now() < deadline) {
    await fn();
    n++;
  }
  const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const cpu = process.cpuUsage(cpu0);
  return { perSecond: (n * 1000) / wallMs, wallMs: wallMs / n, cpuMs: (cpu.user + cpu.system) / 1000 / n };
}

const fmt = (r) =>
  `${r.perSecond.toFixed(1)}/s, ${r.wallMs.toFixed(2)} ms wall, ${r.cpuMs.toFixed(2)} ms CPU`;
console.log(`image ${image.length} bytes (1600x1200 JPEG), clip ${clip.length} bytes (10 s WebM)`);
const results = { image: [], clip: [] };
for (let run = 1; run <= Number(args.runs); run++) {
  for (const [name, bytes, inspect] of [
    ['image', image, (b) => inspector.image(chunks(b))],
    ['clip', clip, (b) => inspector.video(chunks(b))],
  ]) {
    const base = await measure(() => baseline(bytes));
    const real = await measure(async () => {
      const r = await inspect(bytes);
      if (!r.ok) throw new Error(`inspection failed: ${r.error}`);
    });
    const ratio = base.perSecond / real.perSecond;
    results[name].push(real.perSecond);
    console.log(
      `run ${run} ${name}: ${fmt(real)} | baseline sha256 ${fmt(base)} | ${ratio.toFixed(0)}x the baseline`,
    );
  }
}
for (const [name, list] of Object.entries(results)) {
  console.log(
    `${name}: ${Math.min(...list).toFixed(1)}-${Math.max(...list).toFixed(1)} inspections/s over ${list.length} runs`,
  );
}
