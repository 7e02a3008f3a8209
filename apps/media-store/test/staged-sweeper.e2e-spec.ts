import { HeadObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import {
  bootApp,
  createTestEnvironment,
  LOCAL_S3_CREDENTIALS,
  type LocalS3,
  mediaFixture,
  migratorFor,
  startLocalS3,
  TEST_INTERNAL_SERVICE_TOKEN,
  type TestEnvironment,
} from '@tessera/testing';
import { Client } from 'pg';
import request from 'supertest';
import { AppModule } from '../src/app.module';
import { loadEnv } from '../src/config/env';
import { databaseOptions } from '../src/database/database';
import { openTicket, sealTicket, ticketKeysFrom } from '../src/modules/resources/staged-ticket';
import { StagedUploadSweeper } from '../src/modules/resources/staged-upload-sweeper';

const JPEG = mediaFixture('tiny.jpg');
const TTL_SECONDS = 3600;
const ROTATED_TOKEN = 'rotated-internal-service-token-0123';
const TICKET_SECRET = 'media-ticket-secret-0123456789abcdef';

/** The id a ticket names (its payload is base64url JSON; the HMAC after the dot). */
const idOf = (ticket: string): string =>
  (JSON.parse(Buffer.from(ticket.split('.')[0], 'base64url').toString('utf8')) as { id: string }).id;

/**
 * Decision 0460: staged uploads (decision 0457) neither committed nor discarded within MEDIA_STAGED_TTL_SECONDS
 * are swept from blob storage (real Postgres, real s3rver); a commit after the sweep is 410 and records nothing;
 * the ticket's key is MEDIA_TICKET_SECRET, so INTERNAL_SERVICE_TOKEN rotates under uploads in flight.
 */
describe('media-store staged uploads: sweeper and ticket key (s3rver)', () => {
  let env: TestEnvironment;
  let server: LocalS3;
  let s3: S3Client;
  let storageEnv: Record<string, string>;
  let db: Client;
  const apps: NestFastifyApplication[] = [];
  const Bucket = 'tessera-media-sweeper';
  const productId = randomUUID();
  const applicantId = randomUUID();
  const owner = `productId=${productId}&applicantId=${applicantId}`;

  /** One media-store replica on the suite's database and bucket; no periodic sweep unless asked for. */
  const boot = async (extra: Record<string, string> = {}) => {
    const app = await bootApp(
      AppModule.forRoot(
        loadEnv({
          ...env.env,
          INTERNAL_SERVICE_TOKEN: TEST_INTERNAL_SERVICE_TOKEN,
          ...storageEnv,
          MEDIA_STAGED_TTL_SECONDS: String(TTL_SECONDS),
          MEDIA_STAGED_SWEEP_INTERVAL_MS: '0',
          // One upload per sweep transaction: a sweep interleaves with the commits racing it.
          MEDIA_STAGED_SWEEP_BATCH: '1',
          ...extra,
        }),
      ),
      { listen: true },
    );
    apps.push(app);
    return app;
  };
  let app: NestFastifyApplication;

  beforeAll(async () => {
    env = await createTestEnvironment([
      migratorFor(databaseOptions, join(__dirname, '../src/database/migrations')),
    ]);
    server = await startLocalS3();
    s3 = new S3Client({
      endpoint: server.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: LOCAL_S3_CREDENTIALS,
    });
    storageEnv = server.env(Bucket);
    app = await boot();
    db = new Client({ connectionString: env.db.url });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
    for (const a of apps) await a.close();
    await env?.teardown();
    s3?.destroy();
    await server?.close();
  });

  const auth = (token = TEST_INTERNAL_SERVICE_TOKEN) => ({ authorization: `Bearer ${token}` });
  const stage = async (enrollmentId: string, on = app, token?: string): Promise<string> =>
    (
      await request(on.getHttpServer())
        .put(`/internal/v1/resources/${enrollmentId}/selfie/staged?${owner}`)
        .set(auth(token))
        .set('content-type', 'application/octet-stream')
        .send(JPEG)
        .expect(201)
    ).body.ticket as string;
  const post = (
    action: 'commits' | 'discards',
    enrollmentId: string,
    ticket: string,
    on = app,
    token?: string,
  ) =>
    request(on.getHttpServer())
      .post(`/internal/v1/resources/${enrollmentId}/selfie/${action}?${owner}`)
      .set(auth(token))
      .send({ ticket });
  const blobExists = async (enrollmentId: string, ticket: string): Promise<boolean> => {
    const Key = `${productId}/${enrollmentId}/selfie/${idOf(ticket)}`;
    try {
      await s3.send(new HeadObjectCommand({ Bucket, Key }));
      return true;
    } catch (err) {
      if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404)
        return false;
      throw err;
    }
  };
  const recorded = async (ticket: string): Promise<boolean> =>
    (await db.query('SELECT 1 FROM media.resources WHERE id = $1', [idOf(ticket)])).rowCount === 1;
  /** Makes staged uploads look older than the TTL (the sweep compares with the database's clock). */
  const age = async (tickets: string[]) =>
    db.query(
      `UPDATE media.staged_uploads SET created_at = created_at - make_interval(secs => $2) WHERE id = ANY($1::uuid[])`,
      [tickets.map(idOf), TTL_SECONDS + 60],
    );
  const sweep = (on = app) => on.get(StagedUploadSweeper).sweep();

  it('a staged upload never committed is removed from blob storage by the sweep; a committed one and a fresh one are kept', async () => {
    const enrollmentId = randomUUID();
    const [abandoned, committed, fresh] = [
      await stage(enrollmentId),
      await stage(enrollmentId),
      await stage(enrollmentId),
    ];
    await post('commits', enrollmentId, committed).expect(201);
    await age([abandoned, committed]);
    expect(await sweep()).toBe(1);
    expect(await blobExists(enrollmentId, abandoned)).toBe(false);
    expect(await blobExists(enrollmentId, committed)).toBe(true);
    expect(await blobExists(enrollmentId, fresh)).toBe(true);
    // The committed upload still serves its bytes.
    const served = await request(app.getHttpServer())
      .get(`/internal/v1/resources/${enrollmentId}/selfie/1?${owner}`)
      .set(auth())
      .expect(200);
    expect(Buffer.compare(served.body as Buffer, JPEG)).toBe(0);
    // The swept upload's commit comes too late: 410 in the error shape, with its code; nothing is recorded.
    const late = await post('commits', enrollmentId, abandoned).expect(410);
    expect(late.body).toEqual({ message: expect.stringContaining('expired') });
    expect(late.headers['x-error-code']).toBe('staged_upload_expired');
    expect(await recorded(abandoned)).toBe(false);
    // The fresh one is still committable, and a second sweep finds nothing to do.
    await post('commits', enrollmentId, fresh).expect(201);
    expect(await sweep()).toBe(0);
    const { rows } = await db.query(
      'SELECT count(*)::int AS n FROM media.staged_uploads WHERE id = ANY($1::uuid[])',
      [[abandoned, committed, fresh].map(idOf)],
    );
    expect(rows[0].n).toBe(0);
  });

  it('a commit racing the sweep either wins (recorded, bytes kept) or answers 410 (bytes gone, nothing recorded)', async () => {
    const enrollmentId = randomUUID();
    const tickets: string[] = [];
    for (let i = 0; i < 12; i++) tickets.push(await stage(enrollmentId));
    await age(tickets);
    // The sweep starts once the first commit answered, the others still on their way.
    // (`.then` sends a supertest request and turns it into a plain promise.)
    const commits = tickets.map((t) => post('commits', enrollmentId, t).then((answer) => answer));
    await Promise.race(commits);
    const [answers] = await Promise.all([Promise.all(commits), sweep()]);
    for (const [i, answer] of answers.entries()) {
      expect([201, 410]).toContain(answer.status);
      const [exists, isRecorded] = [await blobExists(enrollmentId, tickets[i]), await recorded(tickets[i])];
      expect({ status: answer.status, exists, isRecorded }).toEqual(
        answer.status === 201
          ? { status: 201, exists: true, isRecorded: true }
          : { status: 410, exists: false, isRecorded: false },
      );
    }
    // Whatever the interleaving: no staged row left, and every recorded upload has its bytes.
    expect((await db.query('SELECT 1 FROM media.staged_uploads')).rowCount).toBe(0);
  });

  /** The keys under an enrollment's folder in the bucket. */
  const blobsOf = async (enrollmentId: string): Promise<string[]> =>
    (
      (await s3.send(new ListObjectsV2Command({ Bucket, Prefix: `${productId}/${enrollmentId}/` })))
        .Contents ?? []
    ).map((object) => object.Key ?? '');
  /** The ids of an enrollment's staged rows. */
  const stagedRowsOf = async (enrollmentId: string): Promise<string[]> =>
    (
      await db.query<{ id: string }>('SELECT id FROM media.staged_uploads WHERE storage_key LIKE $1', [
        `${productId}/${enrollmentId}/%`,
      ])
    ).rows.map((row) => row.id);
  /**
   * A staged PUT whose body is held open after its first bytes (a slow client): `finish` sends the rest and
   * answers media-store's reply. Resolves once the upload's staged row is written.
   */
  const slowStage = async (enrollmentId: string) => {
    const { port } = app.getHttpServer().address() as AddressInfo;
    const put = httpRequest({
      host: '127.0.0.1',
      port,
      method: 'PUT',
      path: `/internal/v1/resources/${enrollmentId}/selfie/staged?${owner}`,
      headers: { ...auth(), 'content-type': 'application/octet-stream', 'content-length': JPEG.length },
    });
    const answer = new Promise<{ status: number; code: unknown; body: Record<string, unknown> }>(
      (resolve, reject) => {
        put.once('response', (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.once('end', () =>
            resolve({
              status: response.statusCode ?? 0,
              code: response.headers['x-error-code'],
              body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>,
            }),
          );
        });
        put.once('error', reject);
      },
    );
    put.write(JPEG.subarray(0, 16));
    const deadline = Date.now() + 10_000;
    let rows: string[] = [];
    while ((rows = await stagedRowsOf(enrollmentId)).length === 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(rows).toHaveLength(1);
    return {
      id: rows[0],
      finish: () => {
        put.end(JPEG.subarray(16));
        return answer;
      },
    };
  };
  const ageIds = async (ids: string[]) =>
    db.query(
      `UPDATE media.staged_uploads SET created_at = created_at - make_interval(secs => $2) WHERE id = ANY($1::uuid[])`,
      [ids, TTL_SECONDS + 60],
    );

  it('an upload whose row was swept while its body was still streaming answers 410 and leaves no bytes, no row and no resource', async () => {
    const enrollmentId = randomUUID();
    const upload = await slowStage(enrollmentId);
    // The body takes longer than the TTL: the sweep removes the row (and nothing, no bytes are stored yet).
    await ageIds([upload.id]);
    expect(await sweep()).toBe(1);
    expect(await stagedRowsOf(enrollmentId)).toEqual([]);
    // Then the rest of the body arrives: the late bytes are not handed back as a ticket, they are removed.
    const answer = await upload.finish();
    expect(answer).toEqual({
      status: 410,
      code: 'staged_upload_expired',
      body: { message: expect.stringContaining('expired') },
    });
    expect(await blobsOf(enrollmentId)).toEqual([]);
    expect(await stagedRowsOf(enrollmentId)).toEqual([]);
    expect((await db.query('SELECT 1 FROM media.resources WHERE id = $1', [upload.id])).rowCount).toBe(0);
  });

  it('a sweep holding the row when the last bytes come is waited for: then the row is gone and the upload answers 410', async () => {
    const enrollmentId = randomUUID();
    const upload = await slowStage(enrollmentId);
    await ageIds([upload.id]);
    // A sweep's transaction, held open (as between its lock and its DELETE, while it removes the bytes).
    const sweeper = new Client({ connectionString: env.db.url });
    await sweeper.connect();
    try {
      await sweeper.query('BEGIN');
      await sweeper.query('SELECT 1 FROM media.staged_uploads WHERE id = $1 FOR UPDATE SKIP LOCKED', [
        upload.id,
      ]);
      const answer = upload.finish();
      const deadline = Date.now() + 10_000;
      while (
        (
          await db.query(
            "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
          )
        ).rowCount === 0 &&
        Date.now() < deadline
      )
        await new Promise((resolve) => setTimeout(resolve, 20));
      await sweeper.query('DELETE FROM media.staged_uploads WHERE id = $1', [upload.id]);
      await sweeper.query('COMMIT');
      expect(await answer).toMatchObject({ status: 410, code: 'staged_upload_expired' });
    } finally {
      await sweeper.end();
    }
    expect(await blobsOf(enrollmentId)).toEqual([]);
    expect(await stagedRowsOf(enrollmentId)).toEqual([]);
  });

  it('an upload whose body took longer than the TTL answers 410 even when no sweep ran meanwhile (bytes and row removed)', async () => {
    const enrollmentId = randomUUID();
    const upload = await slowStage(enrollmentId);
    await ageIds([upload.id]);
    const answer = await upload.finish();
    expect(answer).toMatchObject({ status: 410, code: 'staged_upload_expired' });
    expect(await blobsOf(enrollmentId)).toEqual([]);
    expect(await stagedRowsOf(enrollmentId)).toEqual([]);
  });

  it('a slow body stored within the TTL gets a whole TTL for its commit, counted from when its bytes were stored', async () => {
    const enrollmentId = randomUUID();
    const upload = await slowStage(enrollmentId);
    // Nearly a TTL old when the last bytes come.
    await db.query(
      `UPDATE media.staged_uploads SET created_at = created_at - make_interval(secs => $2) WHERE id = $1`,
      [upload.id, TTL_SECONDS - 60],
    );
    const answer = await upload.finish();
    expect(answer.status).toBe(201);
    // A sweep two minutes later (by the row's clock) leaves it: the commit still records it.
    await db.query(
      `UPDATE media.staged_uploads SET created_at = created_at - interval '2 minutes' WHERE id = $1`,
      [upload.id],
    );
    expect(await sweep()).toBe(0);
    await post('commits', enrollmentId, answer.body.ticket as string).expect(201);
    expect(await blobsOf(enrollmentId)).toHaveLength(1);
  });

  it('a commit whose ticket says it has a staged row, finding none, is 410 and removes the late bytes; a ticket from an older media-store (no such claim) is recorded as before', async () => {
    const enrollmentId = randomUUID();
    const ticket = await stage(enrollmentId);
    const keys = ticketKeysFrom({ INTERNAL_SERVICE_TOKEN: TEST_INTERNAL_SERVICE_TOKEN });
    const target = { productId, applicantId, enrollmentId, slot: 'selfie' };
    const staged = openTicket(keys, target, ticket);
    expect(staged).toMatchObject({ hasRow: true });
    // Bytes with no row, whatever removed the row: never recorded, never left behind.
    await db.query('DELETE FROM media.staged_uploads WHERE id = $1', [idOf(ticket)]);
    const late = await post('commits', enrollmentId, ticket).expect(410);
    expect(late.headers['x-error-code']).toBe('staged_upload_expired');
    expect(await recorded(ticket)).toBe(false);
    expect(await blobExists(enrollmentId, ticket)).toBe(false);
    // The same upload sealed as a media-store older than decision 0464 did (no staged row): recorded.
    const other = await stage(enrollmentId);
    const legacy = sealTicket(keys, target, { ...openTicket(keys, target, other)!, hasRow: false });
    expect(legacy).not.toBe(other);
    await db.query('DELETE FROM media.staged_uploads WHERE id = $1', [idOf(other)]);
    await post('commits', enrollmentId, legacy).expect(201);
    expect(await recorded(other)).toBe(true);
    expect(await blobExists(enrollmentId, other)).toBe(true);
  });

  it('a commit after its discard is 410 and records nothing (never a resource without bytes)', async () => {
    const enrollmentId = randomUUID();
    const ticket = await stage(enrollmentId);
    await post('discards', enrollmentId, ticket).expect(204);
    expect(await blobExists(enrollmentId, ticket)).toBe(false);
    await post('commits', enrollmentId, ticket).expect(410);
    expect(await recorded(ticket)).toBe(false);
  });

  it('replicas sweep by themselves every MEDIA_STAGED_SWEEP_INTERVAL_MS and share the work in bounded batches', async () => {
    const enrollmentId = randomUUID();
    const tickets: string[] = [];
    for (let i = 0; i < 9; i++) tickets.push(await stage(enrollmentId));
    const replicas = [
      await boot({ MEDIA_STAGED_SWEEP_INTERVAL_MS: '100', MEDIA_STAGED_SWEEP_BATCH: '2' }),
      await boot({ MEDIA_STAGED_SWEEP_INTERVAL_MS: '100', MEDIA_STAGED_SWEEP_BATCH: '2' }),
    ];
    await age(tickets);
    const deadline = Date.now() + 10_000;
    while ((await db.query('SELECT 1 FROM media.staged_uploads')).rowCount !== 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    for (const ticket of tickets) expect(await blobExists(enrollmentId, ticket)).toBe(false);
    expect((await db.query('SELECT 1 FROM media.staged_uploads')).rowCount).toBe(0);
    for (const replica of replicas) {
      await replica.close();
      apps.splice(apps.indexOf(replica), 1);
    }
  });

  it('the ticket key is MEDIA_TICKET_SECRET: INTERNAL_SERVICE_TOKEN rotates under staged uploads; a previous secret is accepted while set', async () => {
    const enrollmentId = randomUUID();
    // Adopting a secret: a ticket sealed before (keyed by the token) opens with the token as the previous secret.
    const adopting = await boot({
      MEDIA_TICKET_SECRET: TICKET_SECRET,
      MEDIA_TICKET_SECRET_PREVIOUS: TEST_INTERNAL_SERVICE_TOKEN,
    });
    const legacy = await stage(enrollmentId);
    await post('commits', enrollmentId, legacy, adopting).expect(201);
    // The token is rotated: a replica with the new token commits what one with the old token staged.
    const rotated = await boot({ INTERNAL_SERVICE_TOKEN: ROTATED_TOKEN, MEDIA_TICKET_SECRET: TICKET_SECRET });
    const inFlight = await stage(enrollmentId, adopting);
    await post('commits', enrollmentId, inFlight, rotated, ROTATED_TOKEN).expect(201);
    // Without the previous secret, a ticket keyed by the token is not one of this store's: 400, nothing recorded.
    const stale = await stage(enrollmentId);
    const refused = await post('commits', enrollmentId, stale, rotated, ROTATED_TOKEN).expect(400);
    expect(refused.body).toEqual({ message: expect.any(String) });
    expect(await recorded(stale)).toBe(false);
  });
});
