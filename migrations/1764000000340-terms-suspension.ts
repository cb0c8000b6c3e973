import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * terms.md "Resource fields" and "Expiry: suspension": servers and volumes gain the status
 * `suspended`, `suspended_at` and `release_at` (both set exactly while suspended), and
 * `deleted_reason` (null, customer, expired, purchase_failed); a volume gains
 * `previous_server_id` (the server its suspension detached it from).
 *
 * A suspended volume may still name its server while its volume.suspend unmounts and detaches it.
 * Whoever marks a row deleted without a reason gets one from the status it leaves: `creating`
 * (a failed purchase) gives purchase_failed, anything else customer (a trigger); the term sweep
 * sets `expired` itself when it releases. Rows deleted before this migration keep a null reason.
 * A server remembers whether it ran when suspended (`power_before`, not shown): a renewal powers
 * it on again only then.
 *
 * The sweeps find what is due through partial indexes on the deadline: live, settled resources
 * by `expires_at` (suspension) and suspended ones by `release_at` (release).
 */
export class TermsSuspension1764000000340 implements MigrationInterface {
  name = 'TermsSuspension1764000000340';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      DO $do$
      DECLARE c text;
      BEGIN
        FOR c IN SELECT conname FROM pg_constraint
                  WHERE conrelid IN ('volumes'::regclass, 'servers'::regclass) AND contype = 'c'
                    AND pg_get_constraintdef(oid) LIKE '%status = ANY%' AND pg_get_constraintdef(oid) LIKE '%''creating''%'
                    AND pg_get_constraintdef(oid) NOT LIKE '%deleted_at%'
        LOOP
          IF EXISTS (SELECT 1 FROM pg_constraint WHERE conname = c AND conrelid = 'volumes'::regclass) THEN
            EXECUTE format('ALTER TABLE volumes DROP CONSTRAINT %I', c);
          ELSE
            EXECUTE format('ALTER TABLE servers DROP CONSTRAINT %I', c);
          END IF;
        END LOOP;
      END
      $do$;

      ALTER TABLE operations DROP CONSTRAINT operations_type_check,
        ADD CONSTRAINT operations_type_check CHECK (type IN ('vm.create', 'vm.renew', 'vm.delete', 'vm.start', 'vm.stop', 'vm.reboot',
          'volume.create', 'volume.attach', 'volume.detach', 'volume.renew', 'volume.delete', 'vm.suspend', 'volume.suspend',
          'template.deploy', 'template.update', 'template.health', 'template.remove'));

      ALTER TABLE volumes
        ADD CONSTRAINT volumes_status_valid CHECK (status IN ('creating', 'available', 'attached', 'suspended', 'deleting', 'deleted')),
        DROP CONSTRAINT volumes_server_only_attached_or_deleting,
        ADD CONSTRAINT volumes_server_only_attached_or_deleting CHECK (server_id IS NULL OR status IN ('attached', 'deleting', 'suspended')),
        ADD COLUMN suspended_at timestamptz,
        ADD COLUMN release_at timestamptz,
        ADD COLUMN deleted_reason text CHECK (deleted_reason IN ('customer', 'expired', 'purchase_failed')),
        ADD COLUMN previous_server_id text,
        ADD CONSTRAINT volumes_suspended_times CHECK ((status <> 'suspended' OR suspended_at IS NOT NULL) AND (suspended_at IS NULL) = (release_at IS NULL));

      ALTER TABLE servers
        ADD CONSTRAINT servers_status_valid
          CHECK (status IN ('creating', 'running', 'stopping', 'stopped', 'starting', 'rebooting', 'suspended', 'deleting', 'deleted')),
        ADD COLUMN suspended_at timestamptz,
        ADD COLUMN release_at timestamptz,
        ADD COLUMN deleted_reason text CHECK (deleted_reason IN ('customer', 'expired', 'purchase_failed')),
        ADD COLUMN power_before text CHECK (power_before IN ('running', 'stopped')),
        ADD CONSTRAINT servers_suspended_times CHECK ((status <> 'suspended' OR suspended_at IS NOT NULL) AND (suspended_at IS NULL) = (release_at IS NULL));

      -- Whoever writes the row: a live row that is neither suspended nor being deleted has no
      -- suspension times and no deletion reason (a renewal that resumes it, a failed release);
      -- a row marked deleted gets its reason when none was set and loses its suspension times.
      CREATE FUNCTION terms_row_sync() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        IF NEW.deleted_at IS NULL THEN
          IF NEW.status <> 'deleting' THEN
            NEW.deleted_reason := NULL;
          END IF;
          IF NEW.status NOT IN ('suspended', 'deleting') THEN
            NEW.suspended_at := NULL;
            NEW.release_at := NULL;
          END IF;
        ELSIF OLD.deleted_at IS NULL THEN
          IF NEW.deleted_reason IS NULL THEN
            NEW.deleted_reason := CASE WHEN OLD.status = 'creating' THEN 'purchase_failed' ELSE 'customer' END;
          END IF;
          NEW.suspended_at := NULL;
          NEW.release_at := NULL;
        END IF;
        RETURN NEW;
      END
      $fn$;
      CREATE TRIGGER volumes_terms_sync BEFORE UPDATE ON volumes FOR EACH ROW EXECUTE FUNCTION terms_row_sync();
      CREATE TRIGGER servers_terms_sync BEFORE UPDATE ON servers FOR EACH ROW EXECUTE FUNCTION terms_row_sync();

      CREATE INDEX volumes_expiry_due_idx ON volumes (expires_at) WHERE status IN ('available', 'attached');
      CREATE INDEX volumes_release_due_idx ON volumes (release_at) WHERE status = 'suspended';
      CREATE INDEX servers_expiry_due_idx ON servers (expires_at) WHERE status IN ('running', 'stopped') AND expires_at IS NOT NULL;
      CREATE INDEX servers_release_due_idx ON servers (release_at) WHERE status = 'suspended';
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP INDEX servers_release_due_idx; DROP INDEX servers_expiry_due_idx; DROP INDEX volumes_release_due_idx; DROP INDEX volumes_expiry_due_idx;
      ALTER TABLE operations DROP CONSTRAINT operations_type_check,
        ADD CONSTRAINT operations_type_check CHECK (type IN ('vm.create', 'vm.renew', 'vm.delete', 'vm.start', 'vm.stop', 'vm.reboot',
          'volume.create', 'volume.attach', 'volume.detach', 'volume.renew', 'volume.delete',
          'template.deploy', 'template.update', 'template.health', 'template.remove'));
      DROP TRIGGER servers_terms_sync ON servers; DROP TRIGGER volumes_terms_sync ON volumes; DROP FUNCTION terms_row_sync();
      ALTER TABLE servers DROP CONSTRAINT servers_suspended_times, DROP COLUMN deleted_reason, DROP COLUMN release_at, DROP COLUMN suspended_at,
        DROP COLUMN power_before, DROP CONSTRAINT servers_status_valid,
        ADD CONSTRAINT servers_status_check CHECK (status IN ('creating', 'running', 'stopping', 'stopped', 'starting', 'rebooting', 'deleting', 'deleted'));
      ALTER TABLE volumes DROP CONSTRAINT volumes_suspended_times, DROP COLUMN previous_server_id, DROP COLUMN deleted_reason,
        DROP COLUMN release_at, DROP COLUMN suspended_at,
        DROP CONSTRAINT volumes_server_only_attached_or_deleting,
        ADD CONSTRAINT volumes_server_only_attached_or_deleting CHECK (server_id IS NULL OR status IN ('attached', 'deleting')),
        DROP CONSTRAINT volumes_status_valid,
        ADD CONSTRAINT volumes_status_check CHECK (status IN ('creating', 'available', 'attached', 'deleting', 'deleted'));
    `);
  }
}
