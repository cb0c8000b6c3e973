import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The region counter (1764000000140) counts inserted volumes once per INSERT statement instead of
 * once per row. A row-level trigger updated the region row once per volume; a transaction that
 * inserts many volumes of one region (a seed file with 100,000 of them) piled up one row version
 * of that region per volume, each update walking the versions before it: quadratic (20,000
 * volumes took 11 s, 100,000 minutes). Now a statement-level trigger with a transition table adds
 * each region's sum once per statement, and the seed loader inserts volumes many rows per statement.
 *
 * Same guarantees: the counter moves in the same statement and transaction as the insert, under
 * the region row's lock (rows locked in id order, so two multi-region inserts cannot deadlock
 * each other), and an insert that would overfill a region fails with the CHECK
 * `regions_used_within_capacity`. Updates and deletes keep their row-level triggers (a renewal
 * skips them through their column list and WHEN clause, which statement triggers cannot have).
 */
export class RegionUsedGbPerStatement1764000000180 implements MigrationInterface {
  name = 'RegionUsedGbPerStatement1764000000180';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER volumes_count_insert ON volumes;

      CREATE FUNCTION regions_count_inserted_volumes() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        PERFORM 1 FROM regions
          WHERE id IN (SELECT region_id FROM inserted_volumes WHERE deleted_at IS NULL)
          ORDER BY id FOR NO KEY UPDATE;
        UPDATE regions r SET used_gb = r.used_gb + n.gb
          FROM (SELECT region_id, sum(size_gb) AS gb FROM inserted_volumes WHERE deleted_at IS NULL GROUP BY region_id) n
         WHERE r.id = n.region_id;
        RETURN NULL;
      END
      $fn$;

      CREATE TRIGGER volumes_count_insert AFTER INSERT ON volumes
        REFERENCING NEW TABLE AS inserted_volumes
        FOR EACH STATEMENT EXECUTE FUNCTION regions_count_inserted_volumes();
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER volumes_count_insert ON volumes;
      DROP FUNCTION regions_count_inserted_volumes();
      CREATE TRIGGER volumes_count_insert AFTER INSERT ON volumes
        FOR EACH ROW EXECUTE FUNCTION regions_count_volume();
    `);
  }
}
