import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { bootApp } from '@tessera/testing';
import { loadEnv } from '../src/config/env';
import { WorkerModule } from '../src/worker.module';
import type { Harness } from './harness';

/**
 * The verification worker (step checks, enrollment expiry) on the harness's database and Redis, polling fast;
 * the outbox relay stays off, so the suites read the outbox rows themselves. `env` adds to or overrides it.
 */
export function startChecksWorker(
  h: Harness,
  env: Record<string, string> = {},
): Promise<NestFastifyApplication> {
  return bootApp(
    WorkerModule.forRoot(
      loadEnv({
        ...h.env.env,
        CHECKS_POLL_MS: '200',
        ENROLLMENT_EXPIRY_SWEEP_MS: '300',
        OUTBOX_RELAY_ENABLED: 'false',
        ...env,
      }),
    ),
    { rpc: false },
  );
}

/**
 * What the SDK's final submit leaves for the checks worker: the named steps `submitted` on the enrollment, the
 * enrollment submitted and the applicant pending. The worker suites use it to feed steps without a browser.
 */
export async function submitSteps(h: Harness, a: { id: string; enrollmentId: string }, kinds: string[]) {
  for (const kind of kinds) {
    await h.sql(
      `INSERT INTO applicant_steps (applicant_id, enrollment_id, kind, review_status)
       VALUES ($1, $2, $3, 'submitted')
       ON CONFLICT (applicant_id, kind) DO UPDATE SET review_status = 'submitted',
         enrollment_id = excluded.enrollment_id, updated_at = now()`,
      [a.id, a.enrollmentId, kind],
    );
  }
  await h.sql(`UPDATE enrollments SET status = 'submitted' WHERE id = $1`, [a.enrollmentId]);
  await h.sql(`UPDATE applicants SET status = 'pending' WHERE id = $1`, [a.id]);
}
