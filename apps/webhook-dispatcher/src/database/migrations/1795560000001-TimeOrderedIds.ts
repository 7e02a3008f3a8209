import { CREATE_UUIDV7, DROP_UUIDV7 } from '@tessera/platform';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/** `uuidv7()` for the ids of new deliveries and attempts (docs/decisions/0432). */
export class TimeOrderedIds1795560000001 implements MigrationInterface {
  name = 'TimeOrderedIds1795560000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(CREATE_UUIDV7);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(DROP_UUIDV7);
  }
}
