#!/usr/bin/env node
// Bench "media-checks": the cost of the media checks' inspections (decision 0133), in-process, beside a same-run
// baseline that streams the same bytes through sha256 (the floor of reading them at all):
//   - image: a 1600x1200 photo-like JPEG decoded in full by sharp (identity_doc, selfie, poa);
//   - clip: a 10 s 320x240 WebM written to a temporary file and its duration read by ffprobe (liveness).
// CPU ms per inspection is this process's (ffprobe's own CPU is a child's and not counted).
//
//   pnpm build && node bench/media-checks.mjs [--duration 5]
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { standalone } from './lib/bench.mjs';
import { measureCalls } from './lib/inprocess.mjs';
import { requireFrom } from './lib/proc.mjs';
import { figure, progress } from './lib/report.mjs';

async function fixtures(sharp) {
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
    return { image, clip: readFileSync(file) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const chunks = (bytes) =>
  Readable.from([bytes.subarray(0, bytes.length >> 1), bytes.subarray(bytes.length >> 1)]);
const sha = async (bytes) => {
  const hash = createHash('sha256');
  for await (const chunk of chunks(bytes)) hash.update(chunk);
  hash.digest();
};

export const bench = {
  name: 'media-checks',
  description: 'media inspections (sharp decode, ffprobe) vs sha256 of the same bytes',
  async run(ctx) {
    const appRequire = requireFrom('apps/verification-api');
    const { MediaInspectorService } = appRequire('./dist/modules/checks/media-inspector.service');
    const inspector = new MediaInspectorService({ FFPROBE_PATH: process.env.FFPROBE_PATH ?? 'ffprobe' });
    const { image, clip } = await fixtures(appRequire('sharp'));
    const figures = [];
    for (const [name, bytes, inspect] of [
      ['image', image, (b) => inspector.image(chunks(b))],
      ['clip', clip, (b) => inspector.video(chunks(b))],
    ]) {
      const base = await measureCalls(() => sha(bytes), ctx.duration);
      const real = await measureCalls(async () => {
        const r = await inspect(bytes);
        if (!r.ok) throw new Error(`inspection failed: ${r.error}`);
      }, ctx.duration);
      progress(
        `  media-checks ${name}: ${real.perSecond.toFixed(1)}/s, ${real.cpuMsEach.toFixed(2)} CPU ms each`,
      );
      figures.push(
        figure({
          key: `media-checks.${name}`,
          bench: 'media-checks',
          figure:
            name === 'image'
              ? 'image inspection (1600×1200 JPEG decode)'
              : 'clip inspection (10 s WebM, ffprobe)',
          unit: '/s',
          value: real.perSecond,
          baseline: base.perSecond,
          baselineLabel: 'sha256',
          cpuMsPerReq: real.cpuMsEach,
          baselineCpuMsPerReq: base.cpuMsEach,
        }),
      );
    }
    return figures;
  },
};

await standalone(import.meta.url, bench);
