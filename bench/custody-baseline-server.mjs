// Bare Fastify + pg baseline for bench/custody-transfer.mjs: one INSERT … RETURNING per POST, pool 20.
import { createRequire } from 'node:module';

const require = createRequire(new URL('../apps/custody-api/package.json', import.meta.url));
const Fastify = require('fastify');
const { Pool } = require('pg');

const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
await pool.query(
  'CREATE TABLE IF NOT EXISTS bench_baseline (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), body jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())',
);
const app = Fastify({ logger: false });
app.post('/insert', async (request, reply) => {
  const { rows } = await pool.query(
    'INSERT INTO bench_baseline (body) VALUES ($1) RETURNING id, created_at',
    [JSON.stringify(request.body ?? {})],
  );
  reply.code(201);
  return rows[0];
});
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.stdout.write('ready\n');
process.on('SIGTERM', async () => {
  await app.close();
  await pool.end();
  process.exit(0);
});
