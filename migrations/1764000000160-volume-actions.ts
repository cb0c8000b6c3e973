import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * lifecycle.md "Attach, detach, delete": a volume deleted with ?detach=true becomes `deleting` at
 * once while it is still on its server (the worker unmounts and detaches it first), so a server
 * may now be set on a `deleting` volume as well as on an `attached` one; an `attached` volume
 * still always names its server.
 *
 * The per-server slot count of purchases and attaches (disks on the server, plus unfinished
 * volume.create and volume.attach operations with it) reads the unfinished operations of one
 * server: a partial index on operations (vm_id) serves it.
 */
export class VolumeActions1764000000160 implements MigrationInterface {
  name = 'VolumeActions1764000000160';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      DO $do$
      DECLARE c text;
      BEGIN
        SELECT conname INTO c FROM pg_constraint
         WHERE conrelid = 'volumes'::regclass AND contype = 'c'
           AND pg_get_constraintdef(oid) = 'CHECK (((status = ''attached''::text) = (server_id IS NOT NULL)))';
        IF c IS NOT NULL THEN
          EXECUTE format('ALTER TABLE volumes DROP CONSTRAINT %I', c);
        END IF;
      END
      $do$;
      ALTER TABLE volumes
        ADD CONSTRAINT volumes_attached_has_server CHECK (status <> 'attached' OR server_id IS NOT NULL),
        ADD CONSTRAINT volumes_server_only_attached_or_deleting CHECK (server_id IS NULL OR status IN ('attached', 'deleting'));
      CREATE INDEX operations_unfinished_vm_idx ON operations (vm_id)
        WHERE status IN ('pending', 'running') AND vm_id IS NOT NULL;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP INDEX IF EXISTS operations_unfinished_vm_idx;
      ALTER TABLE volumes DROP CONSTRAINT IF EXISTS volumes_server_only_attached_or_deleting,
                          DROP CONSTRAINT IF EXISTS volumes_attached_has_server;
      ALTER TABLE volumes ADD CONSTRAINT volumes_check CHECK ((status = 'attached') = (server_id IS NOT NULL));
    `);
  }
}
