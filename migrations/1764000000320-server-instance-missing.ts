import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * When the server reconciliation sweep found a live server's instance gone at the compute provider
 * (cleared when the instance is seen again): power actions and renewal are refused while it is set.
 */
export class ServerInstanceMissing1764000000320 implements MigrationInterface {
  name = 'ServerInstanceMissing1764000000320';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE servers ADD COLUMN instance_missing_since timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE servers DROP COLUMN instance_missing_since`);
  }
}
