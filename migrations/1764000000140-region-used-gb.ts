import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Region capacity is a counter (lifecycle.md): `regions.used_gb` holds the sum of `size_gb` of the
 * region's live volumes (deleted_at IS NULL), with CHECK (used_gb <= capacity_gb), so free capacity
 * is one column read and no request sums the volumes of a region.
 *
 * The counter is kept by a trigger on volumes, in the same transaction (and under the region row's
 * lock) as the insert, update or delete it accounts for: whatever writes volumes (seed loader, a
 * purchase, a failed purchase, a delete, an operator's SQL) cannot leave it wrong, and two writers
 * racing for the last gigabytes are serialised on the region row; the one that would overfill it
 * gets the CHECK violation `regions_used_within_capacity` (an adapter maps it to out_of_stock).
 * Updates that touch neither size_gb, region_id nor deleted_at (renewals, attach, detach) skip
 * the trigger through its column list and WHEN clause.
 */
export class RegionUsedGb1764000000140 implements MigrationInterface {
  name = 'RegionUsedGb1764000000140';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE regions ADD COLUMN used_gb bigint NOT NULL DEFAULT 0 CHECK (used_gb >= 0);

      UPDATE regions r
         SET used_gb = COALESCE((SELECT sum(v.size_gb) FROM volumes v WHERE v.region_id = r.id AND v.deleted_at IS NULL), 0);

      -- A region over-committed before the counter existed (its live volumes exceed its capacity) was
      -- already out of stock; its capacity is raised to what is used, so it stays exactly that: full.
      UPDATE regions SET capacity_gb = used_gb WHERE used_gb > capacity_gb;

      ALTER TABLE regions ADD CONSTRAINT regions_used_within_capacity CHECK (used_gb <= capacity_gb);

      CREATE FUNCTION regions_count_volume() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.deleted_at IS NULL THEN
          UPDATE regions SET used_gb = used_gb - OLD.size_gb WHERE id = OLD.region_id;
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.deleted_at IS NULL THEN
          UPDATE regions SET used_gb = used_gb + NEW.size_gb WHERE id = NEW.region_id;
        END IF;
        RETURN NULL;
      END
      $fn$;

      CREATE TRIGGER volumes_count_insert AFTER INSERT ON volumes
        FOR EACH ROW EXECUTE FUNCTION regions_count_volume();
      CREATE TRIGGER volumes_count_delete AFTER DELETE ON volumes
        FOR EACH ROW EXECUTE FUNCTION regions_count_volume();
      CREATE TRIGGER volumes_count_update AFTER UPDATE OF size_gb, region_id, deleted_at ON volumes
        FOR EACH ROW
        WHEN (OLD.size_gb IS DISTINCT FROM NEW.size_gb OR OLD.region_id IS DISTINCT FROM NEW.region_id
              OR (OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL))
        EXECUTE FUNCTION regions_count_volume();
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER IF EXISTS volumes_count_update ON volumes;
      DROP TRIGGER IF EXISTS volumes_count_delete ON volumes;
      DROP TRIGGER IF EXISTS volumes_count_insert ON volumes;
      DROP FUNCTION IF EXISTS regions_count_volume();
      ALTER TABLE regions DROP CONSTRAINT IF EXISTS regions_used_within_capacity;
      ALTER TABLE regions DROP COLUMN IF EXISTS used_gb;
    `);
  }
}
