import { MigrationInterface, QueryRunner } from 'typeorm';

/** When the reconciliation sweep found a live volume's disk gone at the provider: renewal and attach are refused while it is set. */
export class VolumeDiskMissing1764000000200 implements MigrationInterface {
  name = 'VolumeDiskMissing1764000000200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE volumes ADD COLUMN disk_missing_since timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE volumes DROP COLUMN disk_missing_since`);
  }
}
