import { MigrationInterface, QueryRunner } from 'typeorm';

const TYPES_BEFORE = `'vm.create', 'vm.renew', 'vm.delete', 'vm.start', 'vm.stop', 'vm.reboot',
          'volume.create', 'volume.attach', 'volume.detach', 'volume.renew', 'volume.delete', 'vm.suspend', 'volume.suspend',
          'template.deploy', 'template.update', 'template.health', 'template.remove'`;

/**
 * Growing a disk (volume.resize), changing a server's plan (vm.resize) and reinstalling it
 * (vm.rebuild). What a resize adds is reserved when it is accepted and kept until it ends:
 * `volumes.resize_reserved_gb` (the gigabytes a disk's resize adds) and
 * `servers.resize_reserved_vcpus` (the vCPUs a plan change adds). The region counters count them
 * with the resource: `used_gb` is the sum of `size_gb + resize_reserved_gb` of the live volumes,
 * `vcpus_used` the sum of `vcpus + resize_reserved_vcpus` of the live servers, kept by the same
 * triggers (so the CHECKs regions_used_within_capacity and regions_vcpus_within_capacity refuse
 * a reservation that does not fit, out_of_stock, under the region row's lock). At success the
 * new size or plan replaces the old and the reservation goes to 0 in one UPDATE (net: the added
 * part stays counted, vCPUs a smaller plan frees go back); at failure the reservation goes to 0.
 * The simulated providers' call records accept the new calls (resize; rebuild).
 */
export class ResizeReservations1764000000400 implements MigrationInterface {
  name = 'ResizeReservations1764000000400';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE volumes ADD COLUMN resize_reserved_gb integer NOT NULL DEFAULT 0 CHECK (resize_reserved_gb >= 0);
      ALTER TABLE servers ADD COLUMN resize_reserved_vcpus integer NOT NULL DEFAULT 0 CHECK (resize_reserved_vcpus >= 0);

      ALTER TABLE operations DROP CONSTRAINT operations_type_check,
        ADD CONSTRAINT operations_type_check CHECK (type IN (${TYPES_BEFORE}, 'volume.resize', 'vm.resize', 'vm.rebuild'));

      ALTER TABLE provider_calls DROP CONSTRAINT provider_calls_action_check,
        ADD CONSTRAINT provider_calls_action_check CHECK (action IN ('create', 'attach', 'mount', 'unmount', 'detach', 'delete', 'resize'));
      ALTER TABLE provider_compute_calls DROP CONSTRAINT provider_compute_calls_action_check,
        ADD CONSTRAINT provider_compute_calls_action_check
        CHECK (action IN ('create', 'await_boot', 'power_on', 'shutdown', 'power_off', 'reboot', 'reset', 'delete', 'resize', 'rebuild'));

      CREATE OR REPLACE FUNCTION regions_count_volume() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.deleted_at IS NULL THEN
          UPDATE regions SET used_gb = used_gb - OLD.size_gb - OLD.resize_reserved_gb WHERE id = OLD.region_id;
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.deleted_at IS NULL THEN
          UPDATE regions SET used_gb = used_gb + NEW.size_gb + NEW.resize_reserved_gb WHERE id = NEW.region_id;
        END IF;
        RETURN NULL;
      END
      $fn$;

      CREATE OR REPLACE FUNCTION regions_count_inserted_volumes() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        PERFORM 1 FROM regions
          WHERE id IN (SELECT region_id FROM inserted_volumes WHERE deleted_at IS NULL)
          ORDER BY id FOR NO KEY UPDATE;
        UPDATE regions r SET used_gb = r.used_gb + n.gb
          FROM (SELECT region_id, sum(size_gb + resize_reserved_gb) AS gb FROM inserted_volumes WHERE deleted_at IS NULL GROUP BY region_id) n
         WHERE r.id = n.region_id;
        RETURN NULL;
      END
      $fn$;

      DROP TRIGGER volumes_count_update ON volumes;
      CREATE TRIGGER volumes_count_update AFTER UPDATE OF size_gb, resize_reserved_gb, region_id, deleted_at ON volumes
        FOR EACH ROW
        WHEN (OLD.size_gb IS DISTINCT FROM NEW.size_gb OR OLD.resize_reserved_gb IS DISTINCT FROM NEW.resize_reserved_gb
              OR OLD.region_id IS DISTINCT FROM NEW.region_id OR (OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL))
        EXECUTE FUNCTION regions_count_volume();

      CREATE OR REPLACE FUNCTION regions_count_server() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.deleted_at IS NULL AND OLD.vcpus IS NOT NULL THEN
          UPDATE regions SET vcpus_used = vcpus_used - OLD.vcpus - OLD.resize_reserved_vcpus WHERE id = OLD.region_id;
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.deleted_at IS NULL AND NEW.vcpus IS NOT NULL THEN
          UPDATE regions SET vcpus_used = vcpus_used + NEW.vcpus + NEW.resize_reserved_vcpus WHERE id = NEW.region_id;
        END IF;
        RETURN NULL;
      END
      $fn$;

      DROP TRIGGER servers_count_update ON servers;
      CREATE TRIGGER servers_count_update AFTER UPDATE OF vcpus, resize_reserved_vcpus, region_id, deleted_at ON servers
        FOR EACH ROW
        WHEN (OLD.vcpus IS DISTINCT FROM NEW.vcpus OR OLD.resize_reserved_vcpus IS DISTINCT FROM NEW.resize_reserved_vcpus
              OR OLD.region_id IS DISTINCT FROM NEW.region_id OR (OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL))
        EXECUTE FUNCTION regions_count_server();
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      UPDATE volumes SET resize_reserved_gb = 0 WHERE resize_reserved_gb <> 0;
      UPDATE servers SET resize_reserved_vcpus = 0 WHERE resize_reserved_vcpus <> 0;
      DROP TRIGGER servers_count_update ON servers;
      CREATE TRIGGER servers_count_update AFTER UPDATE OF vcpus, region_id, deleted_at ON servers
        FOR EACH ROW
        WHEN (OLD.vcpus IS DISTINCT FROM NEW.vcpus OR OLD.region_id IS DISTINCT FROM NEW.region_id
              OR (OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL))
        EXECUTE FUNCTION regions_count_server();
      CREATE OR REPLACE FUNCTION regions_count_server() RETURNS trigger LANGUAGE plpgsql AS $fn$
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
      DROP TRIGGER volumes_count_update ON volumes;
      CREATE TRIGGER volumes_count_update AFTER UPDATE OF size_gb, region_id, deleted_at ON volumes
        FOR EACH ROW
        WHEN (OLD.size_gb IS DISTINCT FROM NEW.size_gb OR OLD.region_id IS DISTINCT FROM NEW.region_id
              OR (OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL))
        EXECUTE FUNCTION regions_count_volume();
      CREATE OR REPLACE FUNCTION regions_count_volume() RETURNS trigger LANGUAGE plpgsql AS $fn$
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
      CREATE OR REPLACE FUNCTION regions_count_inserted_volumes() RETURNS trigger LANGUAGE plpgsql AS $fn$
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
      ALTER TABLE operations DROP CONSTRAINT operations_type_check,
        ADD CONSTRAINT operations_type_check CHECK (type IN (${TYPES_BEFORE}));
      DELETE FROM provider_calls WHERE action = 'resize';
      DELETE FROM provider_compute_calls WHERE action IN ('resize', 'rebuild');
      ALTER TABLE provider_calls DROP CONSTRAINT provider_calls_action_check,
        ADD CONSTRAINT provider_calls_action_check CHECK (action IN ('create', 'attach', 'mount', 'unmount', 'detach', 'delete'));
      ALTER TABLE provider_compute_calls DROP CONSTRAINT provider_compute_calls_action_check,
        ADD CONSTRAINT provider_compute_calls_action_check
        CHECK (action IN ('create', 'await_boot', 'power_on', 'shutdown', 'power_off', 'reboot', 'reset', 'delete'));
      ALTER TABLE servers DROP COLUMN resize_reserved_vcpus;
      ALTER TABLE volumes DROP COLUMN resize_reserved_gb;
    `);
  }
}
