import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * servers.md "The compute provider and the operations": the simulated compute provider's own
 * tables (the shipped ComputeProvider adapter keeps its instances here, so that they survive
 * restarts like a real provider's).
 *
 * - `provider_instances`: one row per instance ever made. One live instance per server, one live
 *   instance per IPv4 address (partial unique indexes). An instance's address comes from the same
 *   sequence as seeded servers' (next_server_ipv4(), 100.64.0.0/10, never reused), so a bought
 *   server's address never meets a seeded one's. Nothing secret is kept: the number of SSH keys and
 *   the byte count of user_data only. `ignores_acpi`: the guest does not halt on an ACPI shutdown
 *   (set at creation when the image is listed in SIMULATED_ACPI_IGNORED_IMAGES; tests may set it).
 * - `provider_compute_calls`: one row per (server, step) call that took effect, with the answer it
 *   gave, so a call repeated after a crash or a lost answer answers as the first did and never
 *   creates, powers or deletes twice (the primary key decides, across processes).
 * - Seeded servers (no plan) are adopted, as seeded disks are: the live ones that exist now get a
 *   running instance with the server's ipv4 and no specs, and a trigger adopts those inserted later
 *   (the seed loader's, or any other writer's), in the same statement.
 */
export class ProviderInstances1764000000272 implements MigrationInterface {
  name = 'ProviderInstances1764000000272';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE provider_instances (
        instance_id      text PRIMARY KEY,
        server_id        text NOT NULL,
        zone_id          text NOT NULL,
        vcpus            integer CHECK (vcpus > 0),
        memory_gb        integer CHECK (memory_gb > 0),
        disk_gb          integer CHECK (disk_gb > 0),
        image            text,
        ipv4             text NOT NULL,
        power            text NOT NULL CHECK (power IN ('running', 'stopped')),
        ssh_key_count    integer NOT NULL DEFAULT 0 CHECK (ssh_key_count >= 0),
        user_data_bytes  integer NOT NULL DEFAULT 0 CHECK (user_data_bytes >= 0),
        ignores_acpi     boolean NOT NULL DEFAULT false,
        created_at       timestamptz NOT NULL DEFAULT now(),
        deleted_at       timestamptz
      );
      CREATE UNIQUE INDEX provider_instances_server_live_key ON provider_instances (server_id) WHERE deleted_at IS NULL;
      CREATE UNIQUE INDEX provider_instances_ipv4_live_key ON provider_instances (ipv4) WHERE deleted_at IS NULL;
      CREATE INDEX provider_instances_server_idx ON provider_instances (server_id);

      CREATE TABLE provider_compute_calls (
        server_id   text NOT NULL,
        step        text NOT NULL,
        action      text NOT NULL CHECK (action IN ('create', 'await_boot', 'power_on', 'shutdown', 'power_off', 'reboot', 'reset', 'delete')),
        answer      jsonb,
        created_at  timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (server_id, step)
      );

      INSERT INTO provider_instances (instance_id, server_id, zone_id, ipv4, power)
      SELECT 'ins_' || substr(md5(id || clock_timestamp()::text), 1, 20), id, zone_id, ipv4, 'running'
        FROM servers WHERE deleted_at IS NULL AND plan_id IS NULL AND ipv4 IS NOT NULL;

      CREATE FUNCTION provider_instances_adopt_seeded() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        INSERT INTO provider_instances (instance_id, server_id, zone_id, ipv4, power)
        VALUES ('ins_' || substr(md5(NEW.id || clock_timestamp()::text || random()::text), 1, 20), NEW.id, NEW.zone_id, NEW.ipv4, 'running');
        RETURN NULL;
      END
      $fn$;
      CREATE TRIGGER provider_instances_adopt_seeded AFTER INSERT ON servers
        FOR EACH ROW WHEN (NEW.plan_id IS NULL AND NEW.deleted_at IS NULL AND NEW.ipv4 IS NOT NULL)
        EXECUTE FUNCTION provider_instances_adopt_seeded();
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER IF EXISTS provider_instances_adopt_seeded ON servers;
      DROP FUNCTION IF EXISTS provider_instances_adopt_seeded();
      DROP TABLE IF EXISTS provider_compute_calls;
      DROP TABLE IF EXISTS provider_instances;
    `);
  }
}
