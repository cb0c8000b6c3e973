import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The foreign keys a purchase's accepting transaction writes before the row they name: checked at
 * commit (DEFERRABLE INITIALLY DEFERRED) instead of at each statement. A purchase inserts its
 * operation, holds the money, marks its quote used and writes its audit entry first, and the
 * server or volume row last, because that insert moves the region's capacity counter (a trigger,
 * under the region row's lock and its CHECK): the one row every purchase in the region shares is
 * then held from the last statement to the commit only. The keys are still checked, once, in the
 * same transaction.
 */
export class PurchaseDeferredKeys1764000000450 implements MigrationInterface {
  name = 'PurchaseDeferredKeys1764000000450';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE operations ALTER CONSTRAINT operations_volume_id_fkey DEFERRABLE INITIALLY DEFERRED;
      ALTER TABLE quotes ALTER CONSTRAINT quotes_volume_id_fkey DEFERRABLE INITIALLY DEFERRED;
      ALTER TABLE quotes ALTER CONSTRAINT quotes_server_id_fkey DEFERRABLE INITIALLY DEFERRED;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE operations ALTER CONSTRAINT operations_volume_id_fkey NOT DEFERRABLE;
      ALTER TABLE quotes ALTER CONSTRAINT quotes_volume_id_fkey NOT DEFERRABLE;
      ALTER TABLE quotes ALTER CONSTRAINT quotes_server_id_fkey NOT DEFERRABLE;
    `);
  }
}
