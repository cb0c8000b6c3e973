import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The staff audit keeps what a catalog change changed: `changes` `{before, after}` (capacity,
 * purchase switch, zone availability, prices, a resource's release_at); null for reads and for
 * writes recorded in full elsewhere.
 */
export class StaffAuditChanges1764000000376 implements MigrationInterface {
  name = 'StaffAuditChanges1764000000376';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE staff_audit ADD COLUMN changes jsonb');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE staff_audit DROP COLUMN changes');
  }
}
