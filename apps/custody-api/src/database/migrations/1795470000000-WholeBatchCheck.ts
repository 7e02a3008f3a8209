import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `require_whole_batch(ok)`: raises SQLSTATE CB001 unless `ok`. The one-statement batch write of the
 * TransactionWriter (docs/decisions/0205) ends with it, so a batch that cannot be applied as a whole (a key
 * already taken, a wallet that would go short, a missing balance row) rolls back in the same round trip.
 */
export class WholeBatchCheck1795470000000 implements MigrationInterface {
  name = 'WholeBatchCheck1795470000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE FUNCTION "require_whole_batch"(ok boolean) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
       BEGIN
         IF ok IS NOT TRUE THEN
           RAISE EXCEPTION 'The batch cannot be applied as a whole' USING ERRCODE = 'CB001';
         END IF;
         RETURN true;
       END $$`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP FUNCTION "require_whole_batch"(boolean)');
  }
}
