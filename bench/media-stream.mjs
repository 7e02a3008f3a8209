#!/usr/bin/env node
// Bench: a 100 MB video uploaded (POST /api/v1/sdk/uploads/liveness_video, multipart) and downloaded
// (GET /v1/applicants/{id}/resources/{resourceId}) through verification-api and media-store (fs driver), beside a
// same-run baseline: the same bytes copied to a file and back through one bare Fastify stream.
// Prints MB/s of each, the ratio to the baseline, CPU ms per transfer, and the peak RSS growth of each service
// (goal: at least 50 % of the baseline's MB/s, RSS growth under 64 MB per service).
//
//   pnpm build && node bench/media-stream.mjs [--runs 3] [--mb 100]
//
// Each service runs as its own process (node dist/main.js), as in production. RSS and CPU come from /proc.
import { fork, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const verificationDir = join(here, '../apps/verification-api');
const appRequire = createRequire(join(verificationDir, 'package.json'));

const { values: args } = parseArgs({
  options: {
    role: { type: 'string' },
    runs: { type: 'string', default: '3' },
    mb: { type: 'string', default: '100' },
  },
});

// ---- baseline child: a bare Fastify that streams a body to a file and the file back ----
async function serveBaseline() {
  const Fastify = appRequire('fastify');
  const dir = process.env.BENCH_DIR;
  const app = Fastify({ logger: false });
  app.addContentTypeParser('application/octet-stream', (_req, _payload, done) => done(null));
  app.put('/blob', async (req, reply) => {
    await pipeline(req.raw, createWriteStream(join(dir, 'baseline.bin')));
    reply.status(201);
    return { ok: true };
  });
  app.get('/blob', (_req, reply) => {
    const path = join(dir, 'baseline.bin');
    reply.header('content-length', statSync(path).size).type('application/octet-stream');
    return reply.send(createReadStream(path));
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  process.send({ url: `http://127.0.0.1:${app.server.address().port}` });
  process.on('SIGTERM', () => process.exit(0));
}

// ---- /proc readers ----
const TICK_MS = 10; // USER_HZ 100
function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}
function rssMb(pid) {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(line.split(/\s+/)[1]) / 1024;
}

/** Samples RSS of `pids` every 20 ms while `work` runs; returns its result, seconds, peak RSS growth and CPU. */
async function observe(pids, work) {
  const base = Object.fromEntries(pids.map((p) => [p, rssMb(p)]));
  const peak = { ...base };
  const cpu0 = Object.fromEntries(pids.map((p) => [p, cpuMs(p)]));
  const timer = setInterval(() => {
    for (const p of pids) peak[p] = Math.max(peak[p], rssMb(p));
  }, 20);
  const t0 = process.hrtime.bigint();
  try {
    const result = await work();
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    for (const p of pids) peak[p] = Math.max(peak[p], rssMb(p));
    return {
      result,
      seconds,
      growth: Object.fromEntries(pids.map((p) => [p, peak[p] - base[p]])),
      cpu: Object.fromEntries(pids.map((p) => [p, cpuMs(p) - cpu0[p]])),
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

function startService(main, env) {
  const child = spawn(process.execPath, [main], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  return { child, stderr: () => stderr };
}

async function waitHealthy(url, service) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (service.child.exitCode !== null) throw new Error(`exited: ${service.stderr()}`);
    if (
      await fetch(`${url}/health`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    if (Date.now() > deadline) throw new Error(`not healthy: ${service.stderr()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (xs, digits = 1) =>
  `median ${median(xs).toFixed(digits)} (min ${Math.min(...xs).toFixed(digits)}, max ${Math.max(...xs).toFixed(digits)})`;

async function main() {
  const testing = appRequire('@tessera/testing');
  const { databaseOptions } = appRequire('./dist/database/database');
  const testEnv = await testing.createTestEnvironment([
    testing.migratorFor(databaseOptions, join(verificationDir, 'src/database/migrations')),
  ]);
  const dir = mkdtempSync(join(tmpdir(), 'tessera-media-bench-'));
  const cleanups = [() => rmSync(dir, { recursive: true, force: true }), () => testEnv.teardown()];
  try {
    // A "video": a real MP4 header (sniffed as video/mp4) followed by random bytes, args.mb × 10^6 bytes.
    const size = Number(args.mb) * 1_000_000;
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

    const mediaPort = await testing.freePort();
    const media = await testing.startMediaStoreProcess({
      ...testEnv.env,
      PORT: String(mediaPort),
      MEDIA_FS_ROOT: join(dir, 'media'),
    });
    cleanups.unshift(() => media.stop());
    const apiPort = await testing.freePort();
    const apiUrl = `http://127.0.0.1:${apiPort}`;
    const api = startService(join(verificationDir, 'dist/main.js'), {
      ...testEnv.env,
      ...media.clientEnv,
      PORT: String(apiPort),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      LOG_REQUESTS: 'false',
      MEDIA_UPLOAD_MAX_BYTES: String(size + 1_000_000),
    });
    cleanups.unshift(() => api.child.kill('SIGTERM'));
    await waitHealthy(apiUrl, api);

    const baseline = fork(fileURLToPath(import.meta.url), ['--role', 'baseline'], {
      env: { ...process.env, BENCH_DIR: dir },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    cleanups.unshift(() => baseline.kill('SIGTERM'));
    const baselineUrl = await new Promise((resolve) => baseline.once('message', (m) => resolve(m.url)));

    // Tenant, applicant, session, SDK token.
    const json = async (path, init) => {
      const res = await fetch(`${apiUrl}${path}`, init);
      if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
      return res.json();
    };
    const admin = (path, body) =>
      json(`/admin/v1${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${testing.TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const product = await admin('/products', { name: 'Bench' });
    const key = await admin(`/products/${product.id}/keys`, { environment: 'production' });
    await admin(`/products/${product.id}/levels`, {
      name: 'BENCH_KYC',
      applicantType: 'individual',
      isDefault: true,
      steps: [{ kind: 'liveness' }],
    });
    const partner = { 'x-api-key': key.apiKey, 'x-api-secret': key.apiSecret, 'x-environment': 'production' };
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

    const pids = { api: api.child.pid, media: media.child.pid, baseline: baseline.pid };
    const rows = [];
    // Warm-up with a small upload so JIT and connection pools are in place before RSS baselines are taken.
    {
      const small = join(dir, 'small.mp4');
      await pipeline(createReadStream(file, { end: 2_000_000 - 1 }), createWriteStream(small));
      await multipartUpload(`${apiUrl}/api/v1/sdk/uploads/liveness_video`, token, small, 2_000_000);
      await rawUpload(`${baselineUrl}/blob`, small, 2_000_000);
    }
    for (let run = 1; run <= Number(args.runs); run++) {
      const bUp = await observe([pids.baseline], () => rawUpload(`${baselineUrl}/blob`, file, size));
      const bDown = await observe([pids.baseline], () => send(`${baselineUrl}/blob`, { method: 'GET' }));
      if (bDown.result.sha256 !== expected) throw new Error('baseline download differs');
      const up = await observe([pids.api, pids.media], () =>
        multipartUpload(`${apiUrl}/api/v1/sdk/uploads/liveness_video`, token, file, size),
      );
      if (up.result.status !== 201) throw new Error(`upload: ${up.result.status} ${up.result.text}`);
      const resource = JSON.parse(up.result.text);
      const down = await observe([pids.api, pids.media], () =>
        send(`${apiUrl}/v1/applicants/bench-media/resources/${resource.id}`, {
          method: 'GET',
          headers: partner,
        }),
      );
      if (down.result.status !== 200 || down.result.sha256 !== expected) throw new Error('download differs');
      const mbps = (o) => size / 1e6 / o.seconds;
      rows.push({
        run,
        'baseline up MB/s': mbps(bUp),
        'api up MB/s': mbps(up),
        'up ratio': mbps(up) / mbps(bUp),
        'baseline down MB/s': mbps(bDown),
        'api down MB/s': mbps(down),
        'down ratio': mbps(down) / mbps(bDown),
        'verification-api RSS growth up/down MB': `${up.growth[pids.api].toFixed(1)} / ${down.growth[pids.api].toFixed(1)}`,
        'media-store RSS growth up/down MB': `${up.growth[pids.media].toFixed(1)} / ${down.growth[pids.media].toFixed(1)}`,
        'baseline RSS growth up/down MB': `${bUp.growth[pids.baseline].toFixed(1)} / ${bDown.growth[pids.baseline].toFixed(1)}`,
        'CPU ms up (api, media, baseline)': `${up.cpu[pids.api]}, ${up.cpu[pids.media]}, ${bUp.cpu[pids.baseline]}`,
        'CPU ms down (api, media, baseline)': `${down.cpu[pids.api]}, ${down.cpu[pids.media]}, ${bDown.cpu[pids.baseline]}`,
        _growth: Math.max(
          up.growth[pids.api],
          down.growth[pids.api],
          up.growth[pids.media],
          down.growth[pids.media],
        ),
      });
    }
    const pick = (k) => rows.map((r) => r[k]);
    console.log(`media-stream bench: ${size / 1e6} MB, ${rows.length} runs, ${new Date().toISOString()}`);
    console.table(
      rows.map(({ _growth, ...r }) =>
        Object.fromEntries(
          Object.entries(r).map(([k, v]) => [k, typeof v === 'number' ? Number(v.toFixed(2)) : v]),
        ),
      ),
    );
    console.log(
      `upload   MB/s api ${fmt(pick('api up MB/s'))}, baseline ${fmt(pick('baseline up MB/s'))}, ratio ${fmt(pick('up ratio'), 2)}`,
    );
    console.log(
      `download MB/s api ${fmt(pick('api down MB/s'))}, baseline ${fmt(pick('baseline down MB/s'))}, ratio ${fmt(pick('down ratio'), 2)}`,
    );
    console.log(
      `peak RSS growth of a service (max over both services and directions): ${fmt(pick('_growth'))} MB`,
    );
    const ok =
      Math.min(...pick('up ratio'), ...pick('down ratio')) >= 0.5 && Math.max(...pick('_growth')) < 64;
    console.log(
      ok ? 'goals met (>= 50 % of baseline MB/s, RSS growth < 64 MB)' : 'goals NOT met in every run',
    );
  } finally {
    for (const cleanup of cleanups)
      await Promise.resolve()
        .then(cleanup)
        .catch(() => undefined);
  }
}

if (args.role === 'baseline') await serveBaseline();
else await main();
