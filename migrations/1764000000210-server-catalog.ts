import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The server catalog (servers.md "Catalog, capacity, options"): plans and images (global), a
 * server offer per region (terms and each plan's monthly price), the region's vCPU counter and the
 * purchase switches.
 *
 * `regions.vcpus_used` is kept like `used_gb`: a trigger on servers adds a server's `vcpus` when it
 * is inserted live and takes them back when it is deleted (deleted_at set) or removed, in the same
 * transaction and under the region row's lock, with CHECK (vcpus_used <= vcpu_capacity): of two
 * purchases racing for the last vCPUs, the second gets the CHECK violation
 * `regions_vcpus_within_capacity` (mapped to out_of_stock). Seeded servers have no plan (vcpus
 * NULL) and count nothing. A region without a server offer has vcpu_capacity 0.
 *
 * The purchase switches: `regions.purchases_paused` per region and the one row of
 * `purchase_switches` for the global one; both are read by every server purchase.
 */
export class ServerCatalog1764000000210 implements MigrationInterface {
  name = 'ServerCatalog1764000000210';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE server_plans (
        id          text PRIMARY KEY,
        vcpus       integer NOT NULL CHECK (vcpus > 0),
        memory_gb   integer NOT NULL CHECK (memory_gb > 0),
        disk_gb     integer NOT NULL CHECK (disk_gb > 0),
        created_at  timestamptz NOT NULL DEFAULT now()
      );

      CREATE TABLE images (
        id          text PRIMARY KEY,
        name        text NOT NULL,
        type        text NOT NULL CHECK (type IN ('system', 'app')),
        created_at  timestamptz NOT NULL DEFAULT now()
      );

      CREATE TABLE server_offers (
        region_id  text PRIMARY KEY REFERENCES regions(id) ON DELETE CASCADE,
        terms      integer[] NOT NULL CHECK (cardinality(terms) > 0 AND terms <@ ARRAY[1, 3, 12])
      );

      CREATE TABLE server_offer_plans (
        region_id        text NOT NULL REFERENCES server_offers(region_id) ON DELETE CASCADE,
        plan_id          text NOT NULL REFERENCES server_plans(id),
        price_usd_minor  numeric(38,0) NOT NULL CHECK (price_usd_minor >= 0),
        price_idr_minor  numeric(38,0) NOT NULL CHECK (price_idr_minor >= 0),
        PRIMARY KEY (region_id, plan_id)
      );

      ALTER TABLE regions
        ADD COLUMN vcpu_capacity bigint NOT NULL DEFAULT 0 CHECK (vcpu_capacity >= 0),
        ADD COLUMN vcpus_used bigint NOT NULL DEFAULT 0 CHECK (vcpus_used >= 0),
        ADD COLUMN purchases_paused boolean NOT NULL DEFAULT false;
      ALTER TABLE regions ADD CONSTRAINT regions_vcpus_within_capacity CHECK (vcpus_used <= vcpu_capacity);

      CREATE TABLE purchase_switches (
        scope   text PRIMARY KEY CHECK (scope = 'global'),
        paused  boolean NOT NULL
      );
      INSERT INTO purchase_switches (scope, paused) VALUES ('global', false);

      ALTER TABLE servers ADD COLUMN vcpus integer CHECK (vcpus > 0);

      CREATE FUNCTION regions_count_server() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.deleted_at IS NULL AND OLD.vcpus IS NOT NULL THEN
          UPDATE regions SET vcpus_used = vcpus_used - OLD.vcpus WHERE id = OLD.region_id;
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.deleted_at IS NULL AND NEW.vcpus IS NOT NULL THEN
          UPDATE regions SET vcpus_used = vcpus_used + NEW.vcpus WHERE id = NEW.region_id;
        END IF;
        RETURN NULL;
      END
      $fn$;

      CREATE TRIGGER servers_count_insert AFTER INSERT ON servers
        FOR EACH ROW WHEN (NEW.vcpus IS NOT NULL AND NEW.deleted_at IS NULL)
        EXECUTE FUNCTION regions_count_server();
      CREATE TRIGGER servers_count_delete AFTER DELETE ON servers
        FOR EACH ROW WHEN (OLD.vcpus IS NOT NULL AND OLD.deleted_at IS NULL)
        EXECUTE FUNCTION regions_count_server();
      CREATE TRIGGER servers_count_update AFTER UPDATE OF vcpus, region_id, deleted_at ON servers
        FOR EACH ROW
        WHEN (OLD.vcpus IS DISTINCT FROM NEW.vcpus OR OLD.region_id IS DISTINCT FROM NEW.region_id
              OR (OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL))
        EXECUTE FUNCTION regions_count_server();
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER IF EXISTS servers_count_update ON servers;
      DROP TRIGGER IF EXISTS servers_count_delete ON servers;
      DROP TRIGGER IF EXISTS servers_count_insert ON servers;
      DROP FUNCTION IF EXISTS regions_count_server();
      ALTER TABLE servers DROP COLUMN IF EXISTS vcpus;
      DROP TABLE IF EXISTS purchase_switches, server_offer_plans, server_offers, images, server_plans;
      ALTER TABLE regions DROP CONSTRAINT IF EXISTS regions_vcpus_within_capacity;
      ALTER TABLE regions DROP COLUMN IF EXISTS purchases_paused, DROP COLUMN IF EXISTS vcpus_used, DROP COLUMN IF EXISTS vcpu_capacity;
    `);
  }
}
