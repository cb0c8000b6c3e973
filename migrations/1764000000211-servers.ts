import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * servers.md "Server and buying": the server gains its status, plan specs and price frozen at
 * purchase, image, ipv4, term, billing, expiry, labels and delete_protection.
 *
 * Existing rows (seeded servers) are converted: `running` (`deleted` when deleted_at is set), an
 * ipv4 from the simulated pool, no labels, no protection, and null plan, specs, image, term,
 * billing, price and expiry. Seeded servers created later get an ipv4 the same way (a trigger:
 * a server without a plan is a seeded one). Names are repaired as 1764000000120 did volumes':
 * a name breaking the server rule (1-63 letters, digits, "." and "-", alphanumeric first and last)
 * has its other characters replaced by "-" and is trimmed; among live servers of one organization
 * sharing a name, the oldest keeps it and the others get "-" and 8 hex digits of their id's MD5.
 *
 * A server whose deleted_at is set becomes `deleted` with no ipv4 (a trigger), whoever writes it.
 *
 * ipv4: from 100.64.0.0/10 (the simulated provider's pool), one sequence, never reused; unique
 * among live servers (a partial unique index).
 */
export class Servers1764000000211 implements MigrationInterface {
  name = 'Servers1764000000211';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      UPDATE servers
         SET name = COALESCE(NULLIF(regexp_replace(regexp_replace(left(regexp_replace(name, '[^A-Za-z0-9.-]', '-', 'g'), 63),
                                                                 '^[^A-Za-z0-9]+', ''), '[^A-Za-z0-9]+$', ''), ''), 'server')
       WHERE name !~ '^[A-Za-z0-9]([A-Za-z0-9.-]{0,61}[A-Za-z0-9])?$';

      UPDATE servers s
         SET name = regexp_replace(left(s.name, 40), '[^A-Za-z0-9]+$', '') || '-' || left(md5(s.id), 8)
        FROM (SELECT id, row_number() OVER (PARTITION BY org_id, name ORDER BY created_at, id) AS n
                FROM servers WHERE deleted_at IS NULL) d
       WHERE d.id = s.id AND d.n > 1;

      CREATE SEQUENCE server_ipv4_seq START 1;
      CREATE FUNCTION next_server_ipv4() RETURNS text LANGUAGE sql VOLATILE AS $fn$
        SELECT host('100.64.0.0'::inet + nextval('server_ipv4_seq'))
      $fn$;

      ALTER TABLE servers
        ADD COLUMN status text NOT NULL DEFAULT 'running'
          CHECK (status IN ('creating', 'running', 'stopping', 'stopped', 'starting', 'rebooting', 'deleting', 'deleted')),
        ADD COLUMN plan_id text REFERENCES server_plans(id),
        ADD COLUMN memory_gb integer CHECK (memory_gb > 0),
        ADD COLUMN disk_gb integer CHECK (disk_gb > 0),
        ADD COLUMN image_id text REFERENCES images(id),
        ADD COLUMN ipv4 text,
        ADD COLUMN term_months integer CHECK (term_months IN (1, 3, 12)),
        ADD COLUMN billing_currency text CHECK (billing_currency IN ('USD', 'IDR')),
        ADD COLUMN billing_amount numeric(38,0) CHECK (billing_amount >= 0),
        ADD COLUMN price_usd_minor numeric(38,0) CHECK (price_usd_minor >= 0),
        ADD COLUMN price_idr_minor numeric(38,0) CHECK (price_idr_minor >= 0),
        ADD COLUMN expires_at timestamptz,
        ADD COLUMN labels jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (volume_labels_valid(labels)),
        ADD COLUMN delete_protection boolean NOT NULL DEFAULT false;

      UPDATE servers SET status = 'deleted' WHERE deleted_at IS NOT NULL;
      UPDATE servers SET ipv4 = next_server_ipv4() WHERE deleted_at IS NULL;

      ALTER TABLE servers
        ADD CONSTRAINT servers_deleted_status CHECK ((status = 'deleted') = (deleted_at IS NOT NULL)),
        ADD CONSTRAINT servers_name_valid CHECK (name ~ '^[A-Za-z0-9]([A-Za-z0-9.-]{0,61}[A-Za-z0-9])?$'),
        -- A plan's specs are frozen with it: all present or (seeded server) all absent.
        ADD CONSTRAINT servers_plan_frozen CHECK (
          (plan_id IS NULL) = (vcpus IS NULL) AND (plan_id IS NULL) = (memory_gb IS NULL) AND (plan_id IS NULL) = (disk_gb IS NULL)
          AND (plan_id IS NULL) = (term_months IS NULL) AND (plan_id IS NULL) = (billing_amount IS NULL));

      CREATE FUNCTION servers_seeded_ipv4() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        NEW.ipv4 := next_server_ipv4();
        RETURN NEW;
      END
      $fn$;
      -- A server marked deleted (deleted_at set) is 'deleted' and gives its ipv4 back, whoever writes it.
      CREATE FUNCTION servers_deleted_sync() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        NEW.status := 'deleted';
        NEW.ipv4 := NULL;
        RETURN NEW;
      END
      $fn$;
      CREATE TRIGGER servers_deleted_sync BEFORE UPDATE OF deleted_at ON servers
        FOR EACH ROW WHEN (OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL)
        EXECUTE FUNCTION servers_deleted_sync();

      CREATE TRIGGER servers_seeded_ipv4 BEFORE INSERT ON servers
        FOR EACH ROW WHEN (NEW.plan_id IS NULL AND NEW.ipv4 IS NULL AND NEW.deleted_at IS NULL)
        EXECUTE FUNCTION servers_seeded_ipv4();

      -- A name is unique among the organization's live servers (409 conflict), also between concurrent requests.
      CREATE UNIQUE INDEX servers_org_name_live_key ON servers (org_id, name) WHERE deleted_at IS NULL;
      CREATE UNIQUE INDEX servers_ipv4_live_key ON servers (ipv4) WHERE deleted_at IS NULL AND ipv4 IS NOT NULL;
      -- The default listing (not deleted, newest first), and the deleted ones.
      CREATE INDEX servers_org_live_created_idx ON servers (org_id, created_at DESC, id DESC) WHERE deleted_at IS NULL;
      CREATE INDEX servers_org_created_idx ON servers (org_id, created_at DESC, id DESC);
      CREATE INDEX servers_labels_idx ON servers USING gin (labels jsonb_path_ops);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER IF EXISTS servers_seeded_ipv4 ON servers;
      DROP TRIGGER IF EXISTS servers_deleted_sync ON servers;
      DROP FUNCTION IF EXISTS servers_deleted_sync();
      DROP FUNCTION IF EXISTS servers_seeded_ipv4();
      DROP INDEX IF EXISTS servers_org_name_live_key, servers_ipv4_live_key, servers_org_live_created_idx, servers_org_created_idx, servers_labels_idx;
      ALTER TABLE servers
        DROP CONSTRAINT IF EXISTS servers_deleted_status, DROP CONSTRAINT IF EXISTS servers_name_valid, DROP CONSTRAINT IF EXISTS servers_plan_frozen,
        DROP COLUMN status, DROP COLUMN plan_id, DROP COLUMN memory_gb, DROP COLUMN disk_gb, DROP COLUMN image_id, DROP COLUMN ipv4,
        DROP COLUMN term_months, DROP COLUMN billing_currency, DROP COLUMN billing_amount, DROP COLUMN price_usd_minor,
        DROP COLUMN price_idr_minor, DROP COLUMN expires_at, DROP COLUMN labels, DROP COLUMN delete_protection;
      DROP FUNCTION IF EXISTS next_server_ipv4();
      DROP SEQUENCE IF EXISTS server_ipv4_seq;
    `);
  }
}
