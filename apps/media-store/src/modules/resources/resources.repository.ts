import { Injectable } from '@nestjs/common';
import type { MediaKind, MediaResource, MediaSlot } from '@tessera/contracts';
import { DataSource } from 'typeorm';
import { ResourceEntity } from './entities/resource.entity';

export interface NewResource {
  id: string;
  tenantId: string;
  applicantId: string;
  enrollmentId: string;
  slot: MediaSlot;
  kind: MediaKind;
  mime: string;
  sizeBytes: number;
  sha256: string;
  storageKey: string;
  documentType: string | null;
  side: string | null;
  source: string | null;
}

export interface ResourceFilter {
  tenantId: string;
  applicantId: string;
  enrollmentId?: string;
  kind?: MediaKind;
  activity: 'active' | 'inactive' | 'all';
}

export const toMediaResource = (row: ResourceEntity): MediaResource => ({
  enrollmentId: row.enrollmentId,
  applicantId: row.applicantId,
  slot: row.slot as MediaSlot,
  seq: row.seq,
  kind: row.kind as MediaKind,
  mime: row.mime,
  sizeBytes: Number(row.sizeBytes),
  sha256: row.sha256,
  documentType: row.documentType,
  side: row.side,
  source: row.source,
  active: row.active,
  addedAtUtc: row.createdAt.toISOString(),
  supersededAtUtc: row.supersededAt ? row.supersededAt.toISOString() : null,
});

/** The slot of the enrollment holds its quota of uploads already (decision 0446). */
export class SlotFullError extends Error {
  constructor(readonly maxUploads: number) {
    super(`Upload limit reached: a slot of one verification takes at most ${maxUploads} uploads`);
  }
}

/**
 * The staged upload being committed has no staged row any more (decision 0460): it was swept or discarded, so its
 * bytes are gone; or it was staged before staged rows existed.
 */
export class StagedUploadGoneError extends Error {
  constructor() {
    super('The staged upload is no longer staged');
  }
}

/** A staged upload the sweeper found expired: its id and where its bytes are. */
export interface ExpiredStagedUpload {
  id: string;
  storageKey: string;
}

/**
 * The uploads a slot of an enrollment holds (its highest sequence number: none is ever deleted) and the clock,
 * read now (clock_timestamp(), not now(): the transaction's start) and cut to milliseconds, what a JS Date holds.
 */
const SLOT_STATE = `
  SELECT COALESCE(MAX("seq"), 0)::int AS "uploads", date_trunc('milliseconds', clock_timestamp()) AS "at"
    FROM "media"."resources" WHERE "enrollment_id" = $1 AND "slot" = $2`;

/** The only reader and writer of schema `media`. */
@Injectable()
export class ResourcesRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** How many uploads the slot of the enrollment holds, superseded ones included. */
  async uploadsIn(enrollmentId: string, slot: string): Promise<number> {
    const [{ uploads }] = (await this.dataSource.query(SLOT_STATE, [enrollmentId, slot])) as Array<{
      uploads: number;
    }>;
    return uploads;
  }

  /**
   * Records a stored upload as the active resource of its slot, in one transaction: the previous active one
   * turns inactive, and the upload takes the slot's next sequence number. A per-slot advisory lock serialises
   * concurrent uploads to one slot, so exactly one stays active (the partial unique index also guarantees it),
   * and an upload past the slot's quota (`maxUploads`) is refused under it (SlotFullError) before anything
   * changes. The stamp of both (the new row's created_at, the old one's superseded_at) is read once the lock is
   * held, so stamps follow the order the lock gives and an upload is never older than the one it supersedes.
   *
   * With `staged` (every upload since decision 0460) the upload's staged row is deleted in the same transaction:
   * when it is gone (a sweep or a discard removed the bytes, and holds the row's lock until they are removed) the
   * upload is not recorded: StagedUploadGoneError, or the resource itself when a concurrent commit of the same
   * upload recorded it first.
   */
  async insertActive(
    input: NewResource,
    maxUploads = Number.MAX_SAFE_INTEGER,
    staged = true,
  ): Promise<ResourceEntity> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
        `media:slot:${input.enrollmentId}:${input.slot}`,
      ]);
      if (staged) {
        const [{ claimed }] = (await manager.query(
          'WITH "d" AS (DELETE FROM "media"."staged_uploads" WHERE "id" = $1 RETURNING 1) SELECT count(*)::int AS "claimed" FROM "d"',
          [input.id],
        )) as Array<{ claimed: number }>;
        if (claimed === 0) {
          const recorded = await manager.findOneBy(ResourceEntity, { id: input.id });
          if (recorded) return recorded;
          throw new StagedUploadGoneError();
        }
      }
      const [{ uploads, at }] = (await manager.query(SLOT_STATE, [input.enrollmentId, input.slot])) as Array<{
        uploads: number;
        at: Date;
      }>;
      if (uploads >= maxUploads) throw new SlotFullError(maxUploads);
      await manager.query(
        'UPDATE "media"."resources" SET "active" = false, "superseded_at" = $3 WHERE "enrollment_id" = $1 AND "slot" = $2 AND "active"',
        [input.enrollmentId, input.slot, at],
      );
      const row = manager.create(ResourceEntity, {
        ...input,
        sizeBytes: String(input.sizeBytes),
        seq: uploads + 1,
        active: true,
        createdAt: at,
        supersededAt: null,
      });
      return manager.save(row);
    });
  }

  /** Notes that bytes are about to be stored under `storageKey`, unrecorded: swept unless committed in time. */
  async recordStaged(id: string, storageKey: string): Promise<void> {
    await this.dataSource.query(
      'INSERT INTO "media"."staged_uploads" ("id", "storage_key") VALUES ($1, $2)',
      [id, storageKey],
    );
  }

  /**
   * Called once an upload's bytes are stored (decision 0464): true when its staged row is still there and younger
   * than `ttlSeconds`, and then restarts the row's clock, so the commit gets a whole TTL from now. The UPDATE waits
   * for a sweep that holds the row, then finds it gone. False when the row was swept while the body streamed, or
   * is older than the TTL (a sweep may come any moment): the row is then put back (or left) expired, so that the
   * caller removes the late bytes, then forgets the row, and the next sweep retries when the removal fails.
   */
  async confirmStaged(id: string, storageKey: string, ttlSeconds: number): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      const [{ confirmed }] = (await manager.query(
        `WITH "u" AS (
           UPDATE "media"."staged_uploads" SET "created_at" = now()
            WHERE "id" = $1 AND "created_at" >= now() - make_interval(secs => $2) RETURNING 1
         ) SELECT count(*)::int AS "confirmed" FROM "u"`,
        [id, ttlSeconds],
      )) as Array<{ confirmed: number }>;
      if (confirmed === 1) return true;
      await manager.query(
        `INSERT INTO "media"."staged_uploads" ("id", "storage_key", "created_at") VALUES ($1, $2, to_timestamp(0))
          ON CONFLICT ("id") DO NOTHING`,
        [id, storageKey],
      );
      return false;
    });
  }

  /** Forgets a staged upload whose bytes were removed (a refused upload, a full slot at commit). */
  async forgetStaged(id: string): Promise<void> {
    await this.dataSource.query('DELETE FROM "media"."staged_uploads" WHERE "id" = $1', [id]);
  }

  /**
   * Discards a staged upload: under its row's lock (a racing commit waits, then finds it gone), `remove` deletes
   * the bytes, then the row. False when the upload is not staged (committed, swept, discarded, or staged before
   * decision 0460); nothing is removed then.
   */
  async discardStaged(id: string, remove: () => Promise<void>): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      const rows = (await manager.query('SELECT 1 FROM "media"."staged_uploads" WHERE "id" = $1 FOR UPDATE', [
        id,
      ])) as unknown[];
      if (rows.length === 0) return false;
      await remove();
      await manager.query('DELETE FROM "media"."staged_uploads" WHERE "id" = $1', [id]);
      return true;
    });
  }

  /**
   * One sweep batch (decision 0460): locks at most `batch` staged uploads older than `ttlSeconds` (by the
   * database's clock), skipping those another replica's sweep, a commit or a discard holds; `remove` deletes each
   * one's bytes and the rows of those removed are deleted in the same transaction. A commit of one of them waits
   * for this transaction, then finds its row gone. Answers how many were locked and how many removed.
   */
  async sweepStaged(
    ttlSeconds: number,
    batch: number,
    remove: (upload: ExpiredStagedUpload) => Promise<boolean>,
  ): Promise<{ expired: number; removed: number }> {
    return this.dataSource.transaction(async (manager) => {
      const expired = (
        (await manager.query(
          `SELECT "id", "storage_key" FROM "media"."staged_uploads"
            WHERE "created_at" < now() - make_interval(secs => $1)
            ORDER BY "created_at" LIMIT $2 FOR UPDATE SKIP LOCKED`,
          [ttlSeconds, batch],
        )) as Array<{ id: string; storage_key: string }>
      ).map((row) => ({ id: row.id, storageKey: row.storage_key }));
      const removed: string[] = [];
      for (const upload of expired) if (await remove(upload)) removed.push(upload.id);
      if (removed.length > 0)
        await manager.query('DELETE FROM "media"."staged_uploads" WHERE "id" = ANY($1::uuid[])', [removed]);
      return { expired: expired.length, removed: removed.length };
    });
  }

  findById(id: string): Promise<ResourceEntity | null> {
    return this.dataSource.getRepository(ResourceEntity).findOneBy({ id });
  }

  find(filter: ResourceFilter): Promise<ResourceEntity[]> {
    const query = this.dataSource
      .getRepository(ResourceEntity)
      .createQueryBuilder('r')
      .where('r.tenantId = :tenantId AND r.applicantId = :applicantId', filter)
      .orderBy('r.createdAt', 'DESC')
      .addOrderBy('r.seq', 'DESC');
    if (filter.enrollmentId) query.andWhere('r.enrollmentId = :enrollmentId', filter);
    if (filter.kind) query.andWhere('r.kind = :kind', filter);
    if (filter.activity !== 'all')
      query.andWhere('r.active = :active', { active: filter.activity === 'active' });
    return query.getMany();
  }

  findOne(key: {
    tenantId: string;
    applicantId: string;
    enrollmentId: string;
    slot: string;
    seq: number;
  }): Promise<ResourceEntity | null> {
    return this.dataSource.getRepository(ResourceEntity).findOneBy(key);
  }
}
