import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * GET /v1/audit-log with `since` or `until` served by an index, however far back (an `until`
 * six months ago took ~0.5 s on a million entries: the scan walked every newer entry on
 * (org_id, seq) to reach it).
 *
 * - An organization's entries get `seq` and `created_at` from its audit_heads row, now in a
 *   BEFORE INSERT trigger: `created_at` is never earlier than the previous entry's
 *   (`greatest(now(), last_at)`: a transaction that began before another but records after it is
 *   stamped with the other's time). So `created_at` is non-decreasing in `seq`, whoever inserts,
 *   and a time bound is a `seq` bound: the reader finds it with one probe of
 *   audit_log_org_created_idx and every filter index serves the range. (A client pulling the
 *   log with `since` = the last `created_at` it saw also never misses a later entry.)
 * - The trigger replaces the adapter's upsert of audit_heads: the same row lock, held to the
 *   commit, so entries still commit in `seq` order.
 * - Entries recorded before this migration keep their times; audit_heads.last_at starts at each
 *   organization's newest.
 */
export class AuditLogTimeOrder1764000000170 implements MigrationInterface {
  name = 'AuditLogTimeOrder1764000000170';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE audit_heads ADD COLUMN last_at timestamptz;
      UPDATE audit_heads h SET last_at = m.at
        FROM (SELECT org_id, max(created_at) AS at FROM audit_log WHERE org_id IS NOT NULL GROUP BY org_id) m
       WHERE m.org_id = h.org_id;

      CREATE FUNCTION audit_log_position() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        INSERT INTO audit_heads AS h (org_id, last_seq, last_at) VALUES (NEW.org_id, 1, NEW.created_at)
        ON CONFLICT (org_id) DO UPDATE SET last_seq = h.last_seq + 1, last_at = greatest(h.last_at, EXCLUDED.last_at)
        RETURNING last_seq, last_at INTO NEW.seq, NEW.created_at;
        RETURN NEW;
      END
      $fn$;
      CREATE TRIGGER audit_log_position BEFORE INSERT ON audit_log
        FOR EACH ROW WHEN (NEW.org_id IS NOT NULL) EXECUTE FUNCTION audit_log_position();

      CREATE INDEX audit_log_org_created_idx ON audit_log (org_id, created_at, seq);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP INDEX audit_log_org_created_idx;
      DROP TRIGGER audit_log_position ON audit_log;
      DROP FUNCTION audit_log_position();
      ALTER TABLE audit_heads DROP COLUMN last_at;
    `);
  }
}
