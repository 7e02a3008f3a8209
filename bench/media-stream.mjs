#!/usr/bin/env node
// Bench "media": a video uploaded (POST /api/v1/sdk/uploads/liveness_video, multipart) and downloaded
// (GET /v1/applicants/{id}/resources/{resourceId}) through verification-api and media-store (fs driver), each its
// own process (node dist/main.js) as in production, beside a same-run baseline: the same bytes streamed to a file
// and back through one bare Fastify process (bench/lib/baseline-server.mjs). MB/s, CPU ms per MB of the serving
// processes, and their peak RSS growth (goals: ≥ 50 % of the baseline's MB/s, RSS growth < 64 MB per service).
//
//   pnpm build && node bench/media-stream.mjs [--mb 100]   (--quick: 20 MB)
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { standalone } from './lib/bench.mjs';
import { startBaselineServer } from './lib/baselines.mjs';
import { DEPLOYED_LOGGING, freePort, requireFrom, root, rssMb, startServer } from './lib/proc.mjs';
import { figure, progress } from './lib/report.mjs';
import { benchProduct } from './lib/verification-product.mjs';

const appRequire = requireFrom('apps/verification-api');

/** Samples RSS of the servers every 20 ms while `work` runs; returns its result, seconds, peak growth and CPU ms. */
async function observe(servers, work) {
  const base = servers.map((s) => rssMb(s.pid));
  const peak = [...base];
  const cpu0 = await Promise.all(servers.map((s) => s.cpuMs()));
  const timer = setInterval(() => servers.forEach((s, i) => (peak[i] = Math.max(peak[i], rssMb(s.pid)))), 20);
  const t0 = process.hrtime.bigint();
  try {
    const result = await work();
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    servers.forEach((s, i) => (peak[i] = Math.max(peak[i], rssMb(s.pid))));
    const cpu1 = await Promise.all(servers.map((s) => s.cpuMs()));
    return {
      result,
      seconds,
      growthMb: Math.max(...servers.map((_, i) => peak[i] - base[i])),
      cpuMs: cpu1.reduce((sum, c, i) => sum + c - cpu0[i], 0),
    };
  } finally {
    clearInterval(timer);
  }
}

// ---- HTTP helpers (streams both ways; nothing is buffered whole) ----
function send(url, { method, headers = {}, body }) {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const hash = createHash('sha256');
      let bytes = 0;
      const chunks = [];
      res.on('data', (c) => {
        bytes += c.length;
        hash.update(c);
        if (chunks.length < 64) chunks.push(c);
      });
      res.on('end', () =>
        resolve({
          status: res.statusCode,
          bytes,
          sha256: hash.digest('hex'),
          text: Buffer.concat(chunks).toString(),
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    if (body) body(req);
    else req.end();
  });
}

function multipartUpload(url, token, file, size) {
  const boundary = `----bench${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="source"\r\n\r\nliveness\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="clip.mp4"\r\n` +
      `Content-Type: video/mp4\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return send(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': `multipart/form-data; boundary=${boundary}`,
      'content-length': String(head.length + size + tail.length),
    },
    body: (req) => {
      req.write(head);
      const stream = createReadStream(file);
      stream.pipe(req, { end: false });
      stream.on('end', () => req.end(tail));
    },
  });
}

function rawUpload(url, file, size) {
  return send(url, {
    method: 'PUT',
    headers: { 'content-type': 'application/octet-stream', 'content-length': String(size) },
    body: (req) => createReadStream(file).pipe(req),
  });
}

export const bench = {
  name: 'media',
  description: 'media upload and download through verification-api + media-store vs a bare streamed copy',
  async run(ctx) {
    const testing = appRequire('@tessera/testing');
    const { databaseOptions } = appRequire('./dist/database/database');
    const testEnv = await testing.createTestEnvironment([
      testing.migratorFor(databaseOptions, join(root, 'apps/verification-api/src/database/migrations')),
    ]);
    const dir = mkdtempSync(join(tmpdir(), 'tessera-media-bench-'));
    const cleanups = [() => rmSync(dir, { recursive: true, force: true }), () => testEnv.teardown()];
    const figures = [];
    try {
      const mb = ctx.quick ? 20 : 100;
      // A "video": a real MP4 header (sniffed as video/mp4) followed by random bytes, mb × 10^6 bytes.
      const size = mb * 1_000_000;
      const file = join(dir, 'video.mp4');
      {
        const out = createWriteStream(file);
        const mp4 = testing.mediaFixture('tiny.mp4');
        out.write(mp4);
        let left = size - mp4.length;
        while (left > 0) {
          const n = Math.min(left, 1 << 20);
          if (!out.write(randomBytes(n))) await new Promise((r) => out.once('drain', r));
          left -= n;
        }
        await new Promise((r) => out.end(r));
      }
      const expected = createHash('sha256').update(readFileSync(file)).digest('hex');

      // Each service migrates its own schema at boot, as in production (media-store's `media` is not in the template).
      const env = {
        ...testEnv.env,
        ...DEPLOYED_LOGGING,
        HOST: '127.0.0.1',
        MIGRATE_ON_BOOT: 'true',
      };
      const mediaPort = await freePort();
      const media = await startServer('media-store', join(root, 'apps/media-store/dist/main.js'), {
        env: {
          ...env,
          PORT: String(mediaPort),
          MEDIA_FS_ROOT: join(dir, 'media'),
          INTERNAL_SERVICE_TOKEN: testing.TEST_INTERNAL_SERVICE_TOKEN,
        },
        readyUrl: `http://127.0.0.1:${mediaPort}/health`,
        profile: true,
      });
      const apiPort = await freePort();
      const api = await startServer(
        'verification-api-main',
        join(root, 'apps/verification-api/dist/main.js'),
        {
          env: {
            ...env,
            PORT: String(apiPort),
            MEDIA_STORE_URL: media.url,
            INTERNAL_SERVICE_TOKEN: testing.TEST_INTERNAL_SERVICE_TOKEN,
            MEDIA_UPLOAD_MAX_BYTES: String(size + 1_000_000),
          },
          readyUrl: `http://127.0.0.1:${apiPort}/health`,
          profile: true,
        },
      );
      const baseline = await startBaselineServer(env.DATABASE_URL, { dir });
      const apiUrl = api.url;

      const json = async (path, init) => {
        const res = await fetch(`${apiUrl}${path}`, init);
        if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
        return res.json();
      };
      const partner = await benchProduct(apiUrl, testing.TEST_ADMIN_TOKEN, [{ kind: 'liveness' }]);
      await json('/v1/applicants', {
        method: 'POST',
        headers: { ...partner, 'content-type': 'application/json' },
        body: JSON.stringify({ externalUserId: 'bench-media' }),
      });
      const session = await json('/v1/applicants/bench-media/verifications', {
        method: 'POST',
        headers: partner,
      });
      const { token } = await json(`/api/v1/sdk/links/${session.shortCode}`);

      // Warm-up with a small upload so JIT and connection pools are in place before RSS baselines are taken.
      {
        const small = join(dir, 'small.mp4');
        await pipeline(createReadStream(file, { end: 2_000_000 - 1 }), createWriteStream(small));
        await multipartUpload(`${apiUrl}/api/v1/sdk/uploads/liveness_video`, token, small, 2_000_000);
        await rawUpload(`${baseline.url}/blob`, small, 2_000_000);
      }
      progress(`media: ${mb} MB up and down, baseline then product`);
      const bUp = await observe([baseline], () => rawUpload(`${baseline.url}/blob`, file, size));
      const bDown = await observe([baseline], () => send(`${baseline.url}/blob`, { method: 'GET' }));
      if (bDown.result.sha256 !== expected) throw new Error('baseline download differs');
      const up = await observe([api, media], () =>
        multipartUpload(`${apiUrl}/api/v1/sdk/uploads/liveness_video`, token, file, size),
      );
      if (up.result.status !== 201)
        throw new Error(`upload: ${up.result.status} ${up.result.text}\n${api.stderr()}\n${media.stderr()}`);
      const resource = JSON.parse(up.result.text);
      const down = await observe([api, media], () =>
        send(`${apiUrl}/v1/applicants/bench-media/resources/${resource.id}`, {
          method: 'GET',
          headers: partner,
        }),
      );
      if (down.result.status !== 200 || down.result.sha256 !== expected) throw new Error('download differs');
      const mbps = (o) => mb / o.seconds;
      for (const [series, label, real, base] of [
        ['upload', `media upload ${mb} MB (multipart, API → media-store)`, up, bUp],
        ['download', `media download ${mb} MB (media-store → API)`, down, bDown],
      ]) {
        progress(
          `  media ${series}: ${mbps(real).toFixed(1)} MB/s, baseline ${mbps(base).toFixed(1)} MB/s, RSS +${real.growthMb.toFixed(1)} MB`,
        );
        figures.push(
          figure({
            key: `media.${series}`,
            bench: 'media',
            series,
            figure: label,
            unit: 'MB/s',
            value: mbps(real),
            baseline: mbps(base),
            baselineLabel: 'bare copy',
            // CPU ms per MB moved (API + media-store; the baseline's one process).
            cpuMsPerReq: real.cpuMs / mb,
            baselineCpuMsPerReq: base.cpuMs / mb,
            cpuPer: 'MB',
            rssGrowthMb: real.growthMb,
            anomalies: real.growthMb < 64 ? 0 : 1,
            goal: { ratioAtLeast: 0.5, zeroAnomalies: true },
          }),
        );
      }
      await api.stop();
      await media.stop();
      await baseline.stop();
    } finally {
      for (const cleanup of cleanups)
        await Promise.resolve()
          .then(cleanup)
          .catch(() => undefined);
    }
    return figures;
  },
};

await standalone(import.meta.url, bench);
