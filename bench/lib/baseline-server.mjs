// The same-run baselines, one bare Fastify process on the bench's own Postgres (env DATABASE_URL, BASELINE_POOL):
//   POST /insert       one INSERT … RETURNING per request (the write baseline)
//   GET  /row/:id      one primary-key SELECT per request (the read baseline)
//   PUT  /blob, GET /blob   the request body streamed to a file and back (the media baseline; BENCH_DIR)
// Started by bench/lib/baselines.mjs; tells its URL over IPC.
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { requireFrom } from './proc.mjs';

const appRequire = requireFrom('apps/verification-api');
const Fastify = appRequire('fastify');
const { Pool } = appRequire('pg');

const pool = new Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.BASELINE_POOL ?? 20),
});
await pool.query(
  `CREATE TABLE IF NOT EXISTS public.bench_baseline (
     id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
     external_user_id text UNIQUE NOT NULL,
     data jsonb NOT NULL,
     created_at timestamptz NOT NULL DEFAULT now())`,
);
const app = Fastify({ logger: false });
app.post('/insert', async (request, reply) => {
  const body = request.body ?? {};
  const { rows } = await pool.query(
    'INSERT INTO public.bench_baseline (external_user_id, data) VALUES ($1, $2) RETURNING id, created_at',
    [body.externalUserId ?? body.idempotencyKey ?? crypto.randomUUID(), JSON.stringify(body)],
  );
  reply.status(201);
  return rows[0];
});
app.get('/row/:id', async (request, reply) => {
  const { rows } = await pool.query(
    'SELECT id, external_user_id, data, created_at FROM public.bench_baseline WHERE id = $1',
    [request.params.id],
  );
  if (rows.length === 0) return reply.status(404).send({ error: 'not found' });
  return rows[0];
});
const dir = process.env.BENCH_DIR;
app.addContentTypeParser('application/octet-stream', (_req, _payload, done) => done(null));
app.put('/blob', async (request, reply) => {
  await pipeline(request.raw, createWriteStream(join(dir, 'baseline.bin')));
  reply.status(201);
  return { ok: true };
});
app.get('/blob', (_request, reply) => {
  const path = join(dir, 'baseline.bin');
  reply.header('content-length', statSync(path).size).type('application/octet-stream');
  return reply.send(createReadStream(path));
});
await app.listen({ port: 0, host: '127.0.0.1' });
process.send({ url: `http://127.0.0.1:${app.server.address().port}` });
process.on('SIGTERM', async () => {
  await app.close();
  await pool.end();
  process.exit(0);
});
