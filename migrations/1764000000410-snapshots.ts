import { MigrationInterface, QueryRunner } from 'typeorm';
import { editOperationTypes } from './support/operation-types';

/** The operation types this migration adds to operations_type_check (whatever other migrations added stays). */
const TYPES = ['snapshot.create', 'snapshot.renew', 'snapshot.delete'];

/**
 * Volume snapshots, prepaid like disks:
 *
 * - `regions` gain the snapshot offer `snapshot_price_*_minor` (both or neither; none: the
 *   region sells no snapshots).
 * - `snapshots`: a point-in-time copy of a disk, bought for a term; it outlives its disk (no
 *   foreign key to the volume's life). `operation_id` names the snapshot's unfinished operation
 *   (one at a time, set under the row's lock).
 * - Quotas in the database: `volume_snapshot_counts` and `org_snapshot_counts` count the live
 *   (not deleted) snapshots of a disk and of an organization, kept by a trigger on `snapshots` in
 *   the writer's transaction, with CHECKs at 10 and 100: two creates racing for the last slot
 *   serialise on the counter row, and the second is refused by the CHECK.
 * - The simulated storage provider keeps its snapshots in `provider_snapshots`; its disks gain a
 *   data marker (what they hold: a new disk's own, or the snapshot's it was restored from).
 * - operations_type_check gains the snapshot operations, edited from its current definition.
 */
export class Snapshots1764000000410 implements MigrationInterface {
  name = 'Snapshots1764000000410';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE regions
        ADD COLUMN snapshot_price_usd_minor numeric CHECK (snapshot_price_usd_minor >= 0),
        ADD COLUMN snapshot_price_idr_minor numeric CHECK (snapshot_price_idr_minor >= 0),
        ADD CONSTRAINT regions_snapshot_price_both CHECK ((snapshot_price_usd_minor IS NULL) = (snapshot_price_idr_minor IS NULL));

      CREATE TABLE snapshots (
        id                     text PRIMARY KEY,
        org_id                 text NOT NULL REFERENCES organizations(id),
        name                   text NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
        status                 text NOT NULL CHECK (status IN ('creating', 'available', 'suspended', 'deleting', 'deleted')),
        volume_id              text NOT NULL REFERENCES volumes(id),
        region_id              text NOT NULL REFERENCES regions(id),
        zone_id                text NOT NULL,
        type                   text NOT NULL,
        size_gb                integer NOT NULL CHECK (size_gb > 0),
        term_months            integer NOT NULL CHECK (term_months IN (1, 3, 12)),
        billing_currency       text NOT NULL CHECK (billing_currency IN ('USD', 'IDR')),
        billing_amount         numeric NOT NULL CHECK (billing_amount >= 0),
        price_usd_minor        numeric NOT NULL,
        price_idr_minor        numeric NOT NULL,
        expires_at             timestamptz NOT NULL,
        auto_renew_enabled     boolean NOT NULL DEFAULT false,
        auto_renew_term_months integer CHECK (auto_renew_term_months IN (1, 3, 12)),
        labels                 jsonb NOT NULL DEFAULT '{}',
        operation_id           text,
        created_at             timestamptz NOT NULL,
        deleted_at             timestamptz,
        suspended_at           timestamptz,
        release_at             timestamptz,
        deleted_reason         text CHECK (deleted_reason IN ('customer', 'expired', 'purchase_failed')),
        CONSTRAINT snapshots_deleted_at CHECK ((status = 'deleted') = (deleted_at IS NOT NULL)),
        CONSTRAINT snapshots_suspended_times CHECK ((status <> 'suspended' OR suspended_at IS NOT NULL) AND (suspended_at IS NULL) = (release_at IS NULL))
      );
      CREATE INDEX snapshots_org_created_idx ON snapshots (org_id, created_at DESC, id DESC);
      CREATE INDEX snapshots_volume_idx ON snapshots (volume_id);
      CREATE INDEX snapshots_expiry_due_idx ON snapshots (expires_at) WHERE status = 'available';
      CREATE INDEX snapshots_release_due_idx ON snapshots (release_at) WHERE status = 'suspended';

      CREATE TABLE volume_snapshot_counts (
        volume_id text PRIMARY KEY,
        live      integer NOT NULL CHECK (live >= 0),
        CONSTRAINT volume_snapshots_within_limit CHECK (live <= 10)
      );
      CREATE TABLE org_snapshot_counts (
        org_id text PRIMARY KEY,
        live   integer NOT NULL CHECK (live >= 0),
        CONSTRAINT org_snapshots_within_limit CHECK (live <= 100)
      );
      CREATE FUNCTION snapshots_count_live() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          IF NEW.status <> 'deleted' THEN
            INSERT INTO volume_snapshot_counts AS c (volume_id, live) VALUES (NEW.volume_id, 1)
              ON CONFLICT (volume_id) DO UPDATE SET live = c.live + 1;
            INSERT INTO org_snapshot_counts AS c (org_id, live) VALUES (NEW.org_id, 1)
              ON CONFLICT (org_id) DO UPDATE SET live = c.live + 1;
          END IF;
        ELSIF OLD.status <> 'deleted' AND NEW.status = 'deleted' THEN
          UPDATE volume_snapshot_counts SET live = live - 1 WHERE volume_id = NEW.volume_id;
          UPDATE org_snapshot_counts SET live = live - 1 WHERE org_id = NEW.org_id;
        END IF;
        RETURN NULL;
      END $fn$;
      CREATE TRIGGER snapshots_count_live AFTER INSERT OR UPDATE OF status ON snapshots
        FOR EACH ROW EXECUTE FUNCTION snapshots_count_live();

      CREATE TABLE provider_snapshots (
        snapshot_id  text PRIMARY KEY,
        provider_id  text NOT NULL UNIQUE,
        volume_id    text NOT NULL,
        zone_id      text NOT NULL,
        size_gb      integer NOT NULL CHECK (size_gb > 0),
        type         text NOT NULL,
        data_marker  text NOT NULL,
        created_at   timestamptz NOT NULL DEFAULT now(),
        deleted_at   timestamptz
      );
      ALTER TABLE provider_disks ADD COLUMN data_marker text;
      UPDATE provider_disks SET data_marker = disk_id;
    `);
    await q.query(`
      ${editOperationTypes('add', TYPES)}
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ${editOperationTypes('remove', TYPES)}
      DROP TABLE provider_snapshots;
      ALTER TABLE provider_disks DROP COLUMN data_marker;
      DROP TRIGGER snapshots_count_live ON snapshots;
      DROP FUNCTION snapshots_count_live();
      DROP TABLE org_snapshot_counts, volume_snapshot_counts, snapshots;
      ALTER TABLE regions DROP CONSTRAINT regions_snapshot_price_both, DROP COLUMN snapshot_price_usd_minor, DROP COLUMN snapshot_price_idr_minor;
    `);
  }
}
