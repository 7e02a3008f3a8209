import {
  DeleteObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { MEDIA_RPC, mediaListReplySchema } from '@tessera/contracts';
import { RpcClient } from '@tessera/platform';
import {
  bootApp,
  createTestEnvironment,
  INTERNAL_AUTH,
  LOCAL_S3_CREDENTIALS,
  mediaFixture,
  migratorFor,
  startLocalS3,
  TEST_INTERNAL_SERVICE_TOKEN,
  TEST_REDIS_URL,
  type TestEnvironment,
} from '@tessera/testing';
import { Client } from 'pg';
import request from 'supertest';
import { AppModule } from '../src/app.module';
import { loadEnv } from '../src/config/env';
import { databaseOptions } from '../src/database/database';

const JPEG = mediaFixture('tiny.jpg');
const WEBM = mediaFixture('tiny.webm');

/** Where the suite's media-store keeps blobs, and how many objects or files (temporary ones included) it holds. */
interface Storage {
  env: Record<string, string>;
  count: () => Promise<number>;
  /** Deletes one blob behind media-store's back (a lost file or object). */
  remove: (key: string) => Promise<void>;
  close: () => Promise<void>;
}

function fsStorage(): Storage {
  const root = mkdtempSync(join(tmpdir(), 'tessera-media-api-'));
  return {
    env: { MEDIA_STORAGE: 'fs', MEDIA_FS_ROOT: root },
    count: async () =>
      readdirSync(root, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).length,
    remove: async (key) => rmSync(join(root, key)),
    close: async () => rmSync(root, { recursive: true, force: true }),
  };
}

async function s3Storage(): Promise<Storage> {
  const server = await startLocalS3();
  const Bucket = 'tessera-media-api';
  const client = new S3Client({
    endpoint: server.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: LOCAL_S3_CREDENTIALS,
  });
  return {
    env: server.env(Bucket),
    count: async () => {
      const objects = await client.send(new ListObjectsV2Command({ Bucket })).catch(() => ({ KeyCount: 0 }));
      const uploads = await client
        .send(new ListMultipartUploadsCommand({ Bucket }))
        .catch(() => ({ Uploads: [] as unknown[] }));
      return (objects.KeyCount ?? 0) + (uploads.Uploads ?? []).length;
    },
    remove: async (Key) => {
      await client.send(new DeleteObjectCommand({ Bucket, Key }));
    },
    close: async () => {
      client.destroy();
      await server.close();
    },
  };
}

describe.each([
  ['fs', async () => fsStorage()],
  ['s3 (s3rver)', s3Storage],
])('media-store internal API on %s', (_name, makeStorage: () => Promise<Storage>) => {
  let env: TestEnvironment;
  let app: NestFastifyApplication;
  let db: Client;
  let rpc: RpcClient;
  let storage: Storage;
  const productId = randomUUID();
  const applicantId = randomUUID();
  const enrollmentId = randomUUID();
  const owner = `productId=${productId}&applicantId=${applicantId}`;

  beforeAll(async () => {
    env = await createTestEnvironment([
      migratorFor(databaseOptions, join(__dirname, '../src/database/migrations')),
    ]);
    storage = await makeStorage();
    app = await bootApp(
      AppModule.forRoot(
        loadEnv({
          ...env.env,
          INTERNAL_SERVICE_TOKEN: TEST_INTERNAL_SERVICE_TOKEN,
          ...storage.env,
          MEDIA_MAX_VIDEO_BYTES: String(256 * 1024),
          MEDIA_MAX_UPLOADS_PER_SLOT: '4',
        }),
      ),
      { listen: true },
    );
    db = new Client({ connectionString: env.db.url });
    await db.connect();
    rpc = new RpcClient(TEST_REDIS_URL, env.redis.prefix);
  });
  afterAll(async () => {
    await rpc?.onApplicationShutdown();
    await db?.end();
    await app?.close();
    await env?.teardown();
    await storage?.close();
  });

  const http = () => request(app.getHttpServer());
  const put = (slot: string, body: Buffer, query = '') =>
    http()
      .put(`/internal/v1/resources/${enrollmentId}/${slot}?${owner}${query}`)
      .set(INTERNAL_AUTH)
      .set('content-type', 'application/octet-stream')
      .send(body);
  const rows = async () => Number((await db.query('SELECT count(*) AS n FROM media.resources')).rows[0].n);
  const files = () => storage.count();

  describe('calls', () => {
    it('401 without the internal service token or with a wrong one', async () => {
      await http().get(`/internal/v1/resources/${enrollmentId}/selfie/1?${owner}`).expect(401);
      await http()
        .put(`/internal/v1/resources/${enrollmentId}/selfie?${owner}`)
        .set('authorization', 'Bearer wrong-token-0123456789')
        .set('content-type', 'application/octet-stream')
        .send(JPEG)
        .expect(401);
      expect(await rows()).toBe(0);
    });

    it('PUT stores with the sniffed type, sha256, size and next sequence; GET, HEAD and Range serve it', async () => {
      const first = await put('selfie', JPEG, '&source=docapture').expect(201);
      expect(first.body).toMatchObject({
        slot: 'selfie',
        seq: 1,
        mime: 'image/jpeg',
        sizeBytes: JPEG.length,
        active: true,
      });
      const second = await put('selfie', JPEG).expect(201);
      expect(second.body.seq).toBe(2);
      const path = `/internal/v1/resources/${enrollmentId}/selfie/1?${owner}`;
      const get = await http().get(path).set(INTERNAL_AUTH).expect(200);
      expect(Buffer.from(get.body).equals(JPEG)).toBe(true);
      expect(get.headers.etag).toBe(`"${first.body.sha256}"`);
      const head = await http().head(path).set(INTERNAL_AUTH).expect(200);
      expect(head.headers['content-length']).toBe(String(JPEG.length));
      const part = await http().get(path).set(INTERNAL_AUTH).set('range', 'bytes=0-3').expect(206);
      expect(part.headers['content-range']).toBe(`bytes 0-3/${JPEG.length}`);
      await http()
        .get(path)
        .set(INTERNAL_AUTH)
        .set('range', `bytes=${JPEG.length + 5}-`)
        .expect(416);
      // Bound to product and applicant.
      await http()
        .get(
          `/internal/v1/resources/${enrollmentId}/selfie/1?productId=${productId}&applicantId=${randomUUID()}`,
        )
        .set(INTERNAL_AUTH)
        .expect(404);
    });

    it('a stored row whose blob is gone answers 404 in the error shape, never a 500', async () => {
      const lost = randomUUID();
      const lostOwner = `productId=${productId}&applicantId=${randomUUID()}`;
      const stored = await http()
        .put(`/internal/v1/resources/${lost}/additional?${lostOwner}`)
        .set(INTERNAL_AUTH)
        .set('content-type', 'application/octet-stream')
        .send(JPEG)
        .expect(201);
      const { rows: found } = await db.query(
        'SELECT storage_key FROM media.resources WHERE enrollment_id = $1 AND seq = $2',
        [lost, stored.body.seq],
      );
      await storage.remove(found[0].storage_key);
      const gone = await http()
        .get(`/internal/v1/resources/${lost}/additional/${stored.body.seq}?${lostOwner}`)
        .set(INTERNAL_AUTH)
        .expect(404);
      expect(gone.body).toEqual({ message: 'Resource content does not exist' });
    });

    it('metadata over Redis RPC (media.resources.list.v1): filters by activity, kind and enrollment', async () => {
      const list = (data: object) =>
        rpc.send(MEDIA_RPC.LIST, { productId, applicantId, ...data }, mediaListReplySchema);
      const all = await list({});
      expect(all.items.map((r) => [r.slot, r.seq, r.active])).toEqual([
        ['selfie', 2, true],
        ['selfie', 1, false],
      ]);
      expect((await list({ activity: 'inactive' })).items.map((r) => r.seq)).toEqual([1]);
      expect((await list({ kind: 'video' })).items).toEqual([]);
      expect((await list({ enrollmentId: randomUUID() })).items).toEqual([]);
    });

    it('an upload is stamped once it holds its slot: a later commit never gets an older addedAtUtc than the upload it supersedes', async () => {
      const slotEnrollment = randomUUID();
      const putTo = () =>
        http()
          .put(`/internal/v1/resources/${slotEnrollment}/selfie?${owner}`)
          .set(INTERNAL_AUTH)
          .set('content-type', 'application/octet-stream')
          .send(JPEG);
      await putTo().expect(201);
      // Hold the slot's lock, as a concurrent upload committing would, while the next upload reaches it.
      const holder = new Client({ connectionString: env.db.url });
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
          `media:slot:${slotEnrollment}:selfie`,
        ]);
        const second = putTo().then((res) => res);
        const waiting = async () =>
          Number(
            (
              await db.query(
                `SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
                   AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
              )
            ).rows[0].n,
          );
        for (let i = 0; i < 100 && (await waiting()) === 0; i++) await new Promise((r) => setTimeout(r, 50));
        expect(await waiting()).toBe(1);
        await new Promise((r) => setTimeout(r, 50));
        const released = (
          await holder.query(`SELECT date_trunc('milliseconds', clock_timestamp())::text AS at`)
        ).rows[0].at as string;
        await holder.query('COMMIT');
        expect((await second).status).toBe(201);
        const { rows: stamps } = await db.query(
          `SELECT seq, created_at >= $2::timestamptz AS "addedAfter", superseded_at >= $2::timestamptz AS "supersededAfter",
                  superseded_at = (SELECT created_at FROM media.resources WHERE enrollment_id = $1 AND seq = 2) AS "supersededAsAdded"
             FROM media.resources WHERE enrollment_id = $1 ORDER BY seq`,
          [slotEnrollment, released],
        );
        expect(stamps).toEqual([
          { seq: 1, addedAfter: false, supersededAfter: true, supersededAsAdded: true },
          { seq: 2, addedAfter: true, supersededAfter: null, supersededAsAdded: null },
        ]);
      } finally {
        await holder.end();
      }
    });

    it('side comes from the slot and source is docapture or liveness: anything else is 400, nothing stored', async () => {
      const sides = randomUUID();
      const putTo = (slot: string, query: string) =>
        http()
          .put(`/internal/v1/resources/${sides}/${slot}?${owner}${query}`)
          .set(INTERNAL_AUTH)
          .set('content-type', 'application/octet-stream')
          .send(JPEG);
      const before = await rows();
      await putTo('selfie', '&side=front').expect(400);
      await putTo('document_front', '&side=back').expect(400);
      await putTo('additional', '&source=camera').expect(400);
      expect(await rows()).toBe(before);
      expect((await putTo('document_back', '').expect(201)).body).toMatchObject({ side: 'back' });
      expect((await putTo('document_front', '&side=front').expect(201)).body).toMatchObject({
        side: 'front',
      });
      expect((await putTo('additional', '&source=liveness').expect(201)).body).toMatchObject({
        side: null,
        source: 'liveness',
      });
    });

    it('a slot of one enrollment takes at most MEDIA_MAX_UPLOADS_PER_SLOT uploads: then 409, nothing stored; other slots and enrollments unaffected', async () => {
      const full = randomUUID();
      const putTo = (enrollment: string, slot: string) =>
        http()
          .put(`/internal/v1/resources/${enrollment}/${slot}?${owner}`)
          .set(INTERNAL_AUTH)
          .set('content-type', 'application/octet-stream')
          .send(JPEG);
      // Concurrent uploads past the quota: the slot's lock lets exactly the quota through.
      const answers = await Promise.all(Array.from({ length: 6 }, () => putTo(full, 'selfie')));
      expect(answers.map((a) => a.status).sort()).toEqual([201, 201, 201, 201, 409, 409]);
      const [before, filesBefore] = [await rows(), await files()];
      const refused = await putTo(full, 'selfie').expect(409);
      expect(refused.body).toEqual({ message: expect.stringMatching(/at most 4 uploads/) });
      expect(await rows()).toBe(before);
      expect(await files()).toBe(filesBefore);
      await putTo(full, 'document_front').expect(201);
      await putTo(randomUUID(), 'selfie').expect(201);
    });

    it('a staged upload is kept unrecorded until its commit: commit records it once (quota checked again), discard removes it, a forged ticket is 400', async () => {
      const staged = randomUUID();
      const base = `/internal/v1/resources/${staged}/selfie`;
      const stage = () =>
        http()
          .put(`${base}/staged?${owner}`)
          .set(INTERNAL_AUTH)
          .set('content-type', 'application/octet-stream')
          .send(JPEG)
          .expect(201);
      const post = (action: string, ticket: string, path = base, who = owner) =>
        http().post(`${path}/${action}?${who}`).set(INTERNAL_AUTH).send({ ticket });
      const [before, filesBefore] = [await rows(), await files()];
      const tickets = await Promise.all(
        [1, 2, 3, 4, 5].map(async () => (await stage()).body.ticket as string),
      );
      expect(await rows()).toBe(before);
      expect(await files()).toBe(filesBefore + 5);
      // Another slot, enrollment or applicant, or a changed ticket: not this store's staged upload.
      const forged = `${tickets[0].slice(0, -2)}AA`;
      for (const [ticket, path, who] of [
        [forged, base, owner],
        [tickets[0], `/internal/v1/resources/${staged}/document_front`, owner],
        [tickets[0], `/internal/v1/resources/${randomUUID()}/selfie`, owner],
        [tickets[0], base, `productId=${productId}&applicantId=${randomUUID()}`],
      ])
        expect((await post('commits', ticket, path, who).expect(400)).body).toEqual({
          message: expect.any(String),
        });
      // Against a quota of four: one committed, then the other four together; the slot's lock lets three
      // through and the fifth upload's bytes go. A repeated commit answers the same resource.
      const first = await post('commits', tickets[0]).expect(201);
      const answers = await Promise.all(tickets.slice(1).map((t) => post('commits', t)));
      expect(answers.map((a) => a.status).sort()).toEqual([201, 201, 201, 409]);
      const repeated = await post('commits', tickets[0]).expect(201);
      expect(repeated.body).toMatchObject({
        seq: first.body.seq,
        sha256: first.body.sha256,
        addedAtUtc: first.body.addedAtUtc,
      });
      expect(await rows()).toBe(before + 4);
      expect(await files()).toBe(filesBefore + 4);
      // A committed upload is never discarded; a staged one is.
      await post('discards', tickets[0]).expect(204);
      expect(await files()).toBe(filesBefore + 4);
      const other = await http()
        .put(`/internal/v1/resources/${staged}/document_front/staged?${owner}`)
        .set(INTERNAL_AUTH)
        .set('content-type', 'application/octet-stream')
        .send(JPEG)
        .expect(201);
      expect(await files()).toBe(filesBefore + 5);
      await post('discards', other.body.ticket, `/internal/v1/resources/${staged}/document_front`).expect(
        204,
      );
      expect(await files()).toBe(filesBefore + 4);
      expect(await rows()).toBe(before + 4);
    });

    it('415 and 413 store nothing (no row, no file, no temp file)', async () => {
      const [before, filesBefore] = [await rows(), await files()];
      await put('selfie', WEBM).expect(415);
      await put('liveness_video', Buffer.concat([WEBM, Buffer.alloc(300 * 1024, 7)])).expect(413);
      expect(await rows()).toBe(before);
      expect(await files()).toBe(filesBefore);
    });

    it('an empty upload is 400 "The file is empty", never 415, on the plain and the staged PUT; nothing stored (decision 0487)', async () => {
      const [before, filesBefore] = [await rows(), await files()];
      const staged = http()
        .put(`/internal/v1/resources/${enrollmentId}/document_front/staged?${owner}`)
        .set(INTERNAL_AUTH)
        .set('content-type', 'application/octet-stream')
        .send(Buffer.alloc(0));
      for (const res of [await put('document_front', Buffer.alloc(0)), await staged]) {
        expect([res.status, res.body]).toEqual([400, { message: 'The file is empty' }]);
      }
      expect(await rows()).toBe(before);
      expect(await files()).toBe(filesBefore);
    });

    it('If-None-Match naming the ETag (weakly, in a list, or *) answers 304 with the validators and no body; another tag the bytes (decision 0487)', async () => {
      const path = `/internal/v1/resources/${enrollmentId}/selfie/1?${owner}`;
      const etag = (await http().head(path).set(INTERNAL_AUTH).expect(200)).headers.etag as string;
      for (const tag of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
        for (const method of ['get', 'head'] as const) {
          const res = await http()[method](path).set(INTERNAL_AUTH).set('if-none-match', tag);
          expect([tag, method, res.status]).toEqual([tag, method, 304]);
          expect(res.headers.etag).toBe(etag);
          expect(res.headers['last-modified']).toEqual(expect.any(String));
          expect(res.headers['content-type']).toBeUndefined();
          expect(res.headers['content-length']).toBeUndefined();
          expect(res.text ?? '').toBe('');
        }
      }
      // Even with a Range: the client has the whole representation.
      await http()
        .get(path)
        .set(INTERNAL_AUTH)
        .set('if-none-match', etag)
        .set('range', 'bytes=0-3')
        .expect(304);
      const other = await http()
        .get(path)
        .set(INTERNAL_AUTH)
        .set('if-none-match', '"other", W/"x"')
        .expect(200);
      expect(Buffer.from(other.body).equals(JPEG)).toBe(true);
      const part = await http()
        .get(path)
        .set(INTERNAL_AUTH)
        .set('if-none-match', '"other"')
        .set('range', 'bytes=0-3');
      expect([part.status, part.headers['content-range']]).toEqual([206, `bytes 0-3/${JPEG.length}`]);
    });

    it('an upload the client aborts half-way leaves nothing behind', async () => {
      const [before, filesBefore] = [await rows(), await files()];
      const { port } = app.getHttpServer().address() as { port: number };
      await new Promise<void>((resolve) => {
        const req = httpRequest({
          host: '127.0.0.1',
          port,
          method: 'PUT',
          path: `/internal/v1/resources/${enrollmentId}/liveness_video?${owner}`,
          headers: {
            ...INTERNAL_AUTH,
            'content-type': 'application/octet-stream',
            'content-length': String(200 * 1024),
          },
        });
        req.on('error', () => resolve());
        req.write(Buffer.concat([WEBM, Buffer.alloc(60 * 1024, 1)]));
        setTimeout(() => {
          req.destroy();
          resolve();
        }, 300);
      });
      // The server notices the closed socket and cleans up.
      for (let i = 0; i < 50 && (await files()) !== filesBefore; i++)
        await new Promise((r) => setTimeout(r, 100));
      expect(await files()).toBe(filesBefore);
      expect(await rows()).toBe(before);
    });
  });
});
