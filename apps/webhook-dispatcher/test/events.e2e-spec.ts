import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { JobQueues } from '@tessera/platform';
import { bootApp, createTestEnvironment, migratorFor, type TestEnvironment } from '@tessera/testing';
import { DataSource } from 'typeorm';
import { AppModule } from '../src/app.module';
import { loadEnv } from '../src/config/env';
import { databaseOptions } from '../src/database/database';

let env: TestEnvironment;
let app: NestFastifyApplication;

beforeAll(async () => {
  env = await createTestEnvironment([
    migratorFor(databaseOptions, join(__dirname, '../src/database/migrations')),
  ]);
  app = await bootApp(AppModule.forRoot(loadEnv(env.env)), { rpc: false });
});

afterAll(async () => {
  await app?.close();
  await env?.teardown();
});

describe('webhook.events consumer', () => {
  it('records a relayed event once, even when the same event is delivered twice', async () => {
    const event = {
      eventId: randomUUID(),
      source: 'custody' as const,
      tenantId: 'tenant-1',
      eventType: 'wallet.created',
      entityType: 'wallet',
      entityId: randomUUID(),
      occurredAt: new Date().toISOString(),
      data: { status: 'Active' },
    };
    const queues = app.get(JobQueues);
    // Two jobs with distinct job ids: BullMQ dedup is bypassed, so the unique key is the only guard.
    await queues.add('WEBHOOK_EVENT', event, { jobId: `${event.eventId}-1` });
    await queues.add('WEBHOOK_EVENT', event, { jobId: `${event.eventId}-2` });
    const db = app.get(DataSource);
    const deadline = Date.now() + 10_000;
    let processed = 0;
    while (processed < 2 && Date.now() < deadline) {
      processed = (await queues.queue('webhook.events').getCompletedCount()) as number;
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(processed).toBe(2);
    const rows = await db.query('SELECT event_type, data FROM received_events WHERE event_id = $1', [
      event.eventId,
    ]);
    expect(rows).toEqual([{ event_type: 'wallet.created', data: { status: 'Active' } }]);
  });
});
