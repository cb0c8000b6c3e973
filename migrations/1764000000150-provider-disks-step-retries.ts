import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 12, the worker's side of the storage provider (lifecycle.md "The storage provider").
 *
 * - `provider_disks`: the simulated provider's own disks (the shipped BlockStorage adapter keeps
 *   them here so that they survive restarts like a real provider's). One disk per volume ever
 *   (volume_id unique, also once deleted: a deleted volume is never bought again).
 *   The live volumes that exist already (seeded) are adopted: their disks are at the provider.
 * - `provider_calls`: one row per (volume, step) call that took effect, with the answer it gave,
 *   so that a call repeated after a crash or a lost answer answers as the first did and never
 *   creates, attaches or mounts twice (the primary key decides, across processes).
 * - `operations.step_failures` / `operations.step_failing_since`: the step retry after
 *   provider_unavailable (backoff 1 s, 2 s, 4 s … 60 s, given up 10 minutes after the first
 *   failure). A deferred step keeps the operation `running` with no worker and `locked_until`
 *   at the next attempt, so the existing claim (and its index) takes it again then.
 */
export class ProviderDisksStepRetries1764000000150 implements MigrationInterface {
  name = 'ProviderDisksStepRetries1764000000150';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE provider_disks (
        disk_id     text PRIMARY KEY,
        volume_id   text NOT NULL UNIQUE,
        zone_id     text NOT NULL,
        size_gb     integer NOT NULL CHECK (size_gb > 0),
        type        text NOT NULL,
        server_id   text,
        mount_path  text,
        mounted     boolean NOT NULL DEFAULT false,
        created_at  timestamptz NOT NULL DEFAULT now(),
        deleted_at  timestamptz,
        CONSTRAINT provider_disks_mounted_attached CHECK (NOT mounted OR server_id IS NOT NULL),
        CONSTRAINT provider_disks_deleted_detached CHECK (deleted_at IS NULL OR server_id IS NULL)
      );
      CREATE INDEX provider_disks_server_idx ON provider_disks (server_id) WHERE server_id IS NOT NULL;

      CREATE TABLE provider_calls (
        volume_id   text NOT NULL,
        step        text NOT NULL,
        action      text NOT NULL CHECK (action IN ('create', 'attach', 'mount', 'unmount', 'detach', 'delete')),
        response    jsonb,
        created_at  timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (volume_id, step)
      );

      -- The disks of the volumes that exist already are at the provider (the simulated one adopts them).
      INSERT INTO provider_disks (disk_id, volume_id, zone_id, size_gb, type, server_id, mount_path, mounted)
      SELECT 'disk_' || substr(md5(id), 1, 20), id, zone_id, size_gb, type, server_id, mount_path, mounted AND server_id IS NOT NULL
        FROM volumes WHERE deleted_at IS NULL AND status <> 'creating';

      ALTER TABLE operations
        ADD COLUMN step_failures integer NOT NULL DEFAULT 0 CHECK (step_failures >= 0),
        ADD COLUMN step_failing_since timestamptz;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE operations DROP COLUMN IF EXISTS step_failing_since, DROP COLUMN IF EXISTS step_failures;
      DROP TABLE IF EXISTS provider_calls;
      DROP TABLE IF EXISTS provider_disks;
    `);
  }
}
