import { Injectable } from '@nestjs/common';
import type { LevelCreateInput, LevelPatchInput } from '@tessera/contracts';
import { DataSource, type EntityManager } from 'typeorm';
import { LevelEntity } from './entities/level.entity';

/** Thrown inside create's transaction so that a taken name rolls back the default it cleared. */
const DUPLICATE = new Error('level name taken');

@Injectable()
export class LevelsRepository {
  constructor(private readonly dataSource: DataSource) {}

  list(productId: string, type: 'individual' | 'company' | 'all', includeInactive: boolean) {
    const qb = this.dataSource
      .getRepository(LevelEntity)
      .createQueryBuilder('l')
      .where('l.productId = :productId', { productId })
      .orderBy('l.name', 'ASC');
    if (type !== 'all') qb.andWhere('l.applicantType = :type', { type });
    if (!includeInactive) qb.andWhere('l.isActive = true');
    return qb.getMany();
  }

  findByName(productId: string, name: string): Promise<LevelEntity | null> {
    return this.dataSource.getRepository(LevelEntity).findOneBy({ productId, name });
  }

  findById(id: string): Promise<LevelEntity | null> {
    return this.dataSource.getRepository(LevelEntity).findOneBy({ id });
  }

  findDefault(productId: string, applicantType: 'individual' | 'company'): Promise<LevelEntity | null> {
    return this.dataSource
      .getRepository(LevelEntity)
      .findOneBy({ productId, applicantType, isDefault: true, isActive: true });
  }

  /**
   * Inserts the level; a new default takes the flag from the previous default of its type. A name taken
   * already rolls the whole transaction back: the previous default keeps its flag.
   */
  async create(productId: string, input: LevelCreateInput): Promise<LevelEntity | 'duplicate'> {
    try {
      return await this.dataSource.transaction(async (manager) => {
        if (input.isDefault) await this.clearDefault(manager, productId, input.applicantType);
        const rows = await manager
          .createQueryBuilder()
          .insert()
          .into(LevelEntity)
          .values({ ...input, productId } as never)
          // Only a taken name is a duplicate: a concurrent default of the same type (levels_one_default_per_type)
          // raises, and answers 409 "concurrent change" rather than a false "already exists".
          .onConflict('("product_id", "name") DO NOTHING')
          .returning('id')
          .execute();
        const id = (rows.raw as { id: string }[])[0]?.id;
        if (!id) throw DUPLICATE;
        return manager.getRepository(LevelEntity).findOneByOrFail({ id });
      });
    } catch (err) {
      if (err === DUPLICATE) return 'duplicate';
      throw err;
    }
  }

  /** Applies a partial update; 'referenced' when a rename is asked of a level applicants or enrollments use. */
  async update(
    level: LevelEntity,
    patch: LevelPatchInput,
  ): Promise<LevelEntity | 'referenced' | 'duplicate'> {
    return this.dataSource.transaction(async (manager) => {
      const [locked] = await manager.query<{ id: string }[]>(
        'SELECT id FROM levels WHERE id = $1 FOR UPDATE',
        [level.id],
      );
      if (!locked) return 'referenced';
      if (patch.name !== undefined && patch.name !== level.name) {
        const refs: unknown[] = await manager.query(
          `SELECT 1 FROM applicants WHERE level_id = $1
           UNION ALL SELECT 1 FROM enrollments WHERE level_id = $1 LIMIT 1`,
          [level.id],
        );
        if (refs.length > 0) return 'referenced';
        const taken: unknown[] = await manager.query(
          'SELECT 1 FROM levels WHERE product_id = $1 AND name = $2',
          [level.productId, patch.name],
        );
        if (taken.length > 0) return 'duplicate';
      }
      // A level that ends up the default of its type (made default, or moved to another type as the default)
      // takes the flag from that type's previous default, as a new default level does.
      const applicantType = patch.applicantType ?? level.applicantType;
      if (patch.isDefault ?? level.isDefault)
        await this.clearDefault(manager, level.productId, applicantType, level.id);
      if (Object.keys(patch).length > 0) await manager.update(LevelEntity, { id: level.id }, patch as never);
      return manager.getRepository(LevelEntity).findOneByOrFail({ id: level.id });
    });
  }

  private async clearDefault(
    manager: EntityManager,
    productId: string,
    applicantType: string,
    exceptId?: string,
  ): Promise<void> {
    await manager.query(
      `UPDATE levels SET is_default = false, updated_at = now()
        WHERE product_id = $1 AND applicant_type = $2 AND is_default AND id IS DISTINCT FROM $3`,
      [productId, applicantType, exceptId ?? null],
    );
  }
}
