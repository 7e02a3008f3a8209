import { Injectable } from '@nestjs/common';
import { VERIFICATION_EVENTS } from '@tessera/contracts';
import { appendToOutbox } from '@tessera/platform';
import { DataSource, type EntityManager } from 'typeorm';
import type { DeclarationsInput, UboCreateInput, UboPatchInput } from '@tessera/contracts';
import { lockApplicantRow } from '../sessions/open-session-lock';
import { REOPEN_ROUND } from './open-children';
import { refuseRow, type RowRefusal } from './row-rules';
import { recordReviewEvent } from '../reviews/review-events';

export interface UboRow {
  id: string;
  uboIndex: number;
  fullName: string;
  dateOfBirth: string | null;
  ownershipPercent: string | null;
  roles: string[];
  email: string | null;
  nationality: string | null;
  linkedApplicantId: string | null;
  source: string;
  identityChangedAfterSpawn: boolean;
  removed: boolean;
  /** The linked child's latest link (short code and expiry), when it has one. */
  linkShortCode: string | null;
  linkExpiresAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** The child a spawn created or found. */
export interface SpawnedChild {
  id: string;
  externalUserId: string;
  levelId: string | null;
  status: string;
  blocklisted: boolean;
}

export type LinkMinter<L> = (manager: EntityManager, child: SpawnedChild) => Promise<L>;

type Refusal<T extends string> = T extends string ? { outcome: T } : never;

export type SpawnOutcome<L> =
  | Refusal<'not_found' | 'removed' | 'external_user_id_taken'>
  | { outcome: 'spawned' | 'already_linked'; row: UboRow; child: SpawnedChild; link: L };

export type RegenerateOutcome<L> =
  | Refusal<'not_found' | 'removed' | 'no_child'>
  | { outcome: 'minted'; row: UboRow; child: SpawnedChild; link: L };

const ROW_SELECT = `
  SELECT u.id, u.ubo_index AS "uboIndex", u.full_name AS "fullName", u.date_of_birth AS "dateOfBirth",
         u.ownership_percent AS "ownershipPercent", u.roles, u.email, u.nationality,
         u.linked_applicant_id AS "linkedApplicantId", u.source,
         u.identity_changed_after_spawn AS "identityChangedAfterSpawn", u.removed,
         e.short_code AS "linkShortCode", e.expires_at AS "linkExpiresAt",
         u.created_at AS "createdAt", u.updated_at AS "updatedAt"
    FROM ubos u
    LEFT JOIN LATERAL (
      SELECT short_code, expires_at FROM enrollments
       WHERE applicant_id = u.linked_applicant_id ORDER BY created_at DESC, id DESC LIMIT 1
    ) e ON true`;

/**
 * A status that a company leaves for `awaiting_user` when its round of children opens again (decision 0443):
 * every one whose verdict may still change. `rejected` FINAL (a blocklist among them) and `expired` (its own
 * link lapsed; a new link reopens it) stay.
 */
const CHILD_SELECT = `
  SELECT id, external_user_id AS "externalUserId", level_id AS "levelId", status, blocklisted
    FROM applicants WHERE id = $1`;

/** The ubos table and the child applicants spawned from it; the only DB toucher of the UBO feature. */
@Injectable()
export class UbosRepository {
  constructor(private readonly dataSource: DataSource) {}

  list(parentId: string): Promise<UboRow[]> {
    return this.dataSource.query<UboRow[]>(
      `${ROW_SELECT} WHERE u.parent_applicant_id = $1 ORDER BY u.ubo_index`,
      [parentId],
    );
  }

  async find(parentId: string, uboIndex: number, manager?: EntityManager): Promise<UboRow | undefined> {
    const [row] = await (manager ?? this.dataSource.manager).query<UboRow[]>(
      `${ROW_SELECT} WHERE u.parent_applicant_id = $1 AND u.ubo_index = $2`,
      [parentId, uboIndex],
    );
    return row;
  }

  /**
   * Appends a row at the next index (max + 1, removed rows included: indexes are never reused). The parent's
   * row lock orders concurrent appends.
   */
  async append(parentId: string, input: UboCreateInput): Promise<UboRow | RowRefusal> {
    return this.dataSource.transaction(async (manager) => {
      await lockApplicantRow(manager, parentId);
      const refused = await refuseRow(manager, parentId, input, null);
      if (refused) return refused;
      const [{ uboIndex }] = await manager.query<{ uboIndex: number }[]>(
        `INSERT INTO ubos (parent_applicant_id, ubo_index, full_name, date_of_birth, ownership_percent, roles,
                           email, nationality)
         SELECT $1, coalesce(max(ubo_index) + 1, 0), $2, $3, $4, $5::jsonb, $6, $7
           FROM ubos WHERE parent_applicant_id = $1
         RETURNING ubo_index AS "uboIndex"`,
        [
          parentId,
          input.fullName,
          input.dateOfBirth,
          input.ownershipPercent,
          JSON.stringify(input.roles),
          input.email ?? null,
          input.nationality ?? null,
        ],
      );
      return (await this.find(parentId, uboIndex, manager))!;
    });
  }

  /**
   * Applies an edit under the row's lock. An edit that changes fullName or dateOfBirth of a spawned row sets
   * `identity_changed_after_spawn` (it stays set: the child's claims still hold the old identity).
   */
  async patch(
    parentId: string,
    uboIndex: number,
    changes: UboPatchInput,
  ): Promise<Refusal<'not_found' | 'removed'> | RowRefusal | { outcome: 'updated'; row: UboRow }> {
    return this.dataSource.transaction(async (manager) => {
      const current = await this.lockRow(manager, parentId, uboIndex);
      if (!current) return { outcome: 'not_found' };
      if (current.removed) return { outcome: 'removed' };
      // Only an edit of who the row is or of its share can break a row rule (decision 0445): an email or a role
      // is written without the company's lock, even on a company whose older rows break a rule.
      if (
        changes.fullName !== undefined ||
        changes.dateOfBirth !== undefined ||
        changes.ownershipPercent !== undefined
      ) {
        // The company's lock after the row's, the order spawn takes them in: edits are checked one at a time.
        await lockApplicantRow(manager, parentId);
        const refused = await refuseRow(
          manager,
          parentId,
          {
            fullName: changes.fullName ?? current.fullName,
            dateOfBirth: changes.dateOfBirth ?? current.dateOfBirth,
            ownershipPercent: changes.ownershipPercent ?? current.ownershipPercent,
          },
          current.id,
        );
        if (refused) return refused;
      }
      const identityChanged =
        current.linkedApplicantId !== null &&
        ((changes.fullName !== undefined && changes.fullName !== current.fullName) ||
          (changes.dateOfBirth !== undefined && changes.dateOfBirth !== current.dateOfBirth));
      await manager.query(
        `UPDATE ubos
            SET full_name = coalesce($2, full_name),
                date_of_birth = coalesce($3, date_of_birth),
                ownership_percent = coalesce($4, ownership_percent),
                roles = coalesce($5::jsonb, roles),
                email = CASE WHEN $6::boolean THEN $7 ELSE email END,
                nationality = CASE WHEN $8::boolean THEN $9 ELSE nationality END,
                identity_changed_after_spawn = identity_changed_after_spawn OR $10,
                updated_at = now()
          WHERE id = $1`,
        [
          current.id,
          changes.fullName ?? null,
          changes.dateOfBirth ?? null,
          changes.ownershipPercent ?? null,
          changes.roles ? JSON.stringify(changes.roles) : null,
          changes.email !== undefined,
          changes.email ?? null,
          changes.nationality !== undefined,
          changes.nationality ?? null,
          identityChanged,
        ],
      );
      return { outcome: 'updated', row: (await this.find(parentId, uboIndex, manager))! };
    });
  }

  /**
   * Marks the row removed (its index stays taken). A spawned child keeps existing, outside the roll-up; `then`
   * runs in the same transaction (the company's roll-up, which the removal may complete).
   */
  async remove(
    parentId: string,
    uboIndex: number,
    then: (manager: EntityManager) => Promise<void>,
  ): Promise<UboRow | undefined> {
    const removed = await this.dataSource.transaction(async (manager) => {
      const rows: unknown[] = await manager.query(
        `UPDATE ubos SET removed = true, updated_at = now()
          WHERE parent_applicant_id = $1 AND ubo_index = $2 RETURNING id`,
        [parentId, uboIndex],
      );
      if (rows.length > 0) await then(manager);
      return rows.length > 0;
    });
    return removed ? this.find(parentId, uboIndex) : undefined;
  }

  async setDeclarations(parentId: string, flags: DeclarationsInput): Promise<void> {
    await this.dataSource.query(
      `UPDATE applicants
          SET has_no_ubos = coalesce($2, has_no_ubos),
              has_no_shareholders = coalesce($3, has_no_shareholders),
              has_no_directors = coalesce($4, has_no_directors),
              has_no_representatives = coalesce($5, has_no_representatives),
              updated_at = now()
        WHERE id = $1`,
      [
        parentId,
        flags.hasNoUbos ?? null,
        flags.hasNoShareholders ?? null,
        flags.hasNoDirectors ?? null,
        flags.hasNoRepresentatives ?? null,
      ],
    );
  }

  /**
   * spawn-kyc in one transaction. The UBO row's lock makes it idempotent under concurrent calls: the first
   * creates the child (applicant, partner claims, `applicant.created`, `applicantCreated` outbox row), links
   * it, and opens the parent's round again (REOPEN_ROUND: an approved company waits in `awaiting_user` for the
   * new child, and its verdict is computed again when the round closes); the others wait on the lock and find
   * the child linked. Every call mints a fresh link (`mint`) in the same transaction.
   */
  async spawn<L>(
    input: {
      productId: string;
      parentId: string;
      uboIndex: number;
      childExternalUserId: string;
      sandbox: boolean;
      /** The child's level and its identity fields (level keys), used only when the row has no child yet. */
      level: { id: string; name: string };
      info: Record<string, unknown>;
    },
    mint: LinkMinter<L>,
  ): Promise<SpawnOutcome<L>> {
    return this.dataSource.transaction(async (manager) => {
      const row = await this.lockRow(manager, input.parentId, input.uboIndex);
      if (!row) return { outcome: 'not_found' };
      if (row.removed) return { outcome: 'removed' };
      if (row.linkedApplicantId) {
        const [child] = await manager.query<SpawnedChild[]>(CHILD_SELECT, [row.linkedApplicantId]);
        const link = await mint(manager, child);
        return { outcome: 'already_linked', row, child, link };
      }
      const [created] = await manager.query<{ id: string; createdAt: Date }[]>(
        `INSERT INTO applicants (product_id, external_user_id, type, level_id, info, sandbox, parent_applicant_id)
         VALUES ($1, $2, 'individual', $3, $4::jsonb, $5, $6)
         ON CONFLICT (external_user_id, product_id) DO NOTHING
         RETURNING id, created_at AS "createdAt"`,
        [
          input.productId,
          input.childExternalUserId,
          input.level.id,
          JSON.stringify(input.info),
          input.sandbox,
          input.parentId,
        ],
      );
      if (!created) return { outcome: 'external_user_id_taken' };
      await manager.query(
        `INSERT INTO field_claims (applicant_id, field, value) SELECT $1, f.key, f.value FROM jsonb_each($2::jsonb) f`,
        [created.id, JSON.stringify(input.info)],
      );
      await recordReviewEvent(
        manager,
        { id: created.id, productId: input.productId },
        'applicant.created',
        'partner',
        { parentApplicantId: input.parentId, uboIndex: input.uboIndex },
        created.createdAt,
      );
      await appendToOutbox(manager, [
        {
          tenantId: input.productId,
          eventType: VERIFICATION_EVENTS.APPLICANT_CREATED,
          entityType: 'applicant',
          entityId: created.id,
          // The child's first event: its row starts at 1 (decision 0426).
          sequence: 1,
          occurredAt: created.createdAt,
          data: {
            applicantId: created.id,
            externalUserId: input.childExternalUserId,
            type: 'individual',
            levelName: input.level.name,
            sandbox: input.sandbox,
            createdAtUtc: new Date(created.createdAt).toISOString(),
          },
        },
      ]);
      await manager.query(
        `UPDATE ubos SET linked_applicant_id = $2, identity_changed_after_spawn = false, updated_at = now()
          WHERE id = $1`,
        [row.id, created.id],
      );
      await manager.query(REOPEN_ROUND, [input.parentId]);
      const [child] = await manager.query<SpawnedChild[]>(CHILD_SELECT, [created.id]);
      const link = await mint(manager, child);
      return {
        outcome: 'spawned',
        row: { ...row, linkedApplicantId: created.id },
        child,
        link,
      };
    });
  }

  /**
   * regenerate-link: a fresh link for the row's child, under the row's lock, in one transaction. A child that
   * the link takes out of its verdict (a RETRY rejection reopened) opens its parent's round again, so that the
   * company's verdict follows the child's new one (decision 0443): `mint` opens the link with
   * SessionsRepository.openIn, which does that for every link, a spawn-kyc repeat's and the child's own too.
   */
  async regenerate<L>(
    parentId: string,
    uboIndex: number,
    mint: LinkMinter<L>,
  ): Promise<RegenerateOutcome<L>> {
    return this.dataSource.transaction(async (manager) => {
      const row = await this.lockRow(manager, parentId, uboIndex);
      if (!row) return { outcome: 'not_found' };
      if (row.removed) return { outcome: 'removed' };
      if (!row.linkedApplicantId) return { outcome: 'no_child' };
      const [child] = await manager.query<SpawnedChild[]>(CHILD_SELECT, [row.linkedApplicantId]);
      // The link reopens a RETRY-rejected child and, with it, the company's round (SessionsRepository.openIn).
      const link = await mint(manager, child);
      const [after] = await manager.query<SpawnedChild[]>(CHILD_SELECT, [child.id]);
      return { outcome: 'minted', row, child: after, link };
    });
  }

  private async lockRow(
    manager: EntityManager,
    parentId: string,
    uboIndex: number,
  ): Promise<UboRow | undefined> {
    await manager.query('SELECT 1 FROM ubos WHERE parent_applicant_id = $1 AND ubo_index = $2 FOR UPDATE', [
      parentId,
      uboIndex,
    ]);
    return this.find(parentId, uboIndex, manager);
  }
}
