import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Accounts and audit log over HTTP (lifecycle.md "Accounts", "Audit log"). The existing tables
 * are migrated in place, not replaced:
 *
 * - api_keys: `token_prefix` (the first 13 characters of the token, for recognition; null for
 *   keys made before this migration, whose plain token was never stored), `expires_at` (optional expiry) and `last_used_at` (written at most once a minute);
 *   an index listing an organization's keys newest first.
 * - audit_log: a public id (`aud_…`), `target_type`, `request_id`, and `seq`, the entry's
 *   position in its organization's log, taken from `audit_heads` (one counter row per
 *   organization, incremented by the inserting transaction and so locked until it commits).
 *   Entries of one organization therefore commit in `seq` order: a reader always sees a prefix
 *   of the log, and keyset pages on `seq` never skip or repeat an entry, whatever the order in
 *   which concurrent transactions commit (a bigserial alone would not do: ids are taken at
 *   INSERT, and transactions commit in another order). Actor `operator` becomes `system`.
 *   Append-only: a trigger refuses UPDATE, DELETE and TRUNCATE.
 */
export class AccountsAuditLog1764000000130 implements MigrationInterface {
  name = 'AccountsAuditLog1764000000130';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE api_keys
        ADD COLUMN token_prefix text CHECK (length(token_prefix) = 13),
        ADD COLUMN expires_at timestamptz,
        ADD COLUMN last_used_at timestamptz;
      CREATE INDEX api_keys_org_created_idx ON api_keys (org_id, created_at DESC, id DESC);

      ALTER TABLE audit_log DROP CONSTRAINT audit_log_actor_type_check;
      UPDATE audit_log SET actor_type = 'system' WHERE actor_type = 'operator';
      ALTER TABLE audit_log
        ADD CONSTRAINT audit_log_actor_type_check CHECK (actor_type IN ('user', 'api_key', 'system', 'anonymous')),
        ADD COLUMN public_id text NOT NULL DEFAULT ('aud_' || replace(gen_random_uuid()::text, '-', '')),
        ADD COLUMN target_type text,
        ADD COLUMN request_id text,
        ADD COLUMN seq bigint;
      UPDATE audit_log a SET seq = n.seq
        FROM (SELECT id, row_number() OVER (PARTITION BY org_id ORDER BY id) AS seq FROM audit_log WHERE org_id IS NOT NULL) n
       WHERE a.id = n.id;
      CREATE TABLE audit_heads (
        org_id    text PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
        last_seq  bigint NOT NULL CHECK (last_seq > 0)
      );
      INSERT INTO audit_heads (org_id, last_seq) SELECT org_id, max(seq) FROM audit_log WHERE org_id IS NOT NULL GROUP BY org_id;
      UPDATE audit_log SET target_type = CASE
          WHEN target_id IS NULL THEN NULL
          WHEN action = 'catalog.zone_set' THEN 'zone'
          WHEN action = 'catalog.region_capacity_set' THEN 'region'
          WHEN target_id LIKE 'ses\\_%' THEN 'session'
          WHEN target_id LIKE 'key\\_%' THEN 'api_key'
          WHEN target_id LIKE 'usr\\_%' THEN 'user'
          WHEN target_id LIKE 'vol\\_%' THEN 'volume'
          ELSE 'unknown' END;
      ALTER TABLE audit_log
        ADD CONSTRAINT audit_log_public_id_key UNIQUE (public_id),
        ADD CONSTRAINT audit_log_target_check CHECK ((target_id IS NULL) = (target_type IS NULL)),
        ADD CONSTRAINT audit_log_seq_check CHECK ((org_id IS NULL) = (seq IS NULL));

      DROP INDEX audit_log_org_idx;
      CREATE UNIQUE INDEX audit_log_org_seq_key ON audit_log (org_id, seq DESC);
      CREATE INDEX audit_log_org_action_idx ON audit_log (org_id, action, seq DESC);
      CREATE INDEX audit_log_org_actor_idx ON audit_log (org_id, actor_id, seq DESC) WHERE actor_id IS NOT NULL;
      CREATE INDEX audit_log_org_target_idx ON audit_log (org_id, target_id, seq DESC) WHERE target_id IS NOT NULL;

      CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        RAISE EXCEPTION 'audit_log is append-only' USING ERRCODE = 'restrict_violation';
      END
      $fn$;
      CREATE TRIGGER audit_log_no_update BEFORE UPDATE OR DELETE ON audit_log
        FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
      CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
        FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER audit_log_no_truncate ON audit_log;
      DROP TRIGGER audit_log_no_update ON audit_log;
      DROP FUNCTION audit_log_append_only();
      DROP INDEX audit_log_org_target_idx, audit_log_org_actor_idx, audit_log_org_action_idx, audit_log_org_seq_key;
      DROP TABLE audit_heads;
      CREATE INDEX audit_log_org_idx ON audit_log (org_id, created_at DESC, id DESC);
      ALTER TABLE audit_log DROP CONSTRAINT audit_log_seq_check, DROP CONSTRAINT audit_log_target_check, DROP CONSTRAINT audit_log_public_id_key,
        DROP COLUMN seq, DROP COLUMN request_id, DROP COLUMN target_type, DROP COLUMN public_id,
        DROP CONSTRAINT audit_log_actor_type_check;
      ALTER TABLE audit_log ADD CONSTRAINT audit_log_actor_type_check CHECK (actor_type IN ('user', 'api_key', 'system', 'operator', 'anonymous'));
      DROP INDEX api_keys_org_created_idx;
      ALTER TABLE api_keys DROP COLUMN last_used_at, DROP COLUMN expires_at, DROP COLUMN token_prefix;
    `);
  }
}
