import { MigrationInterface, QueryRunner } from 'typeorm';
import { editOperationTypes } from './support/operation-types';

/** The operation types this migration adds to operations_type_check (whatever other migrations added stays). */
const TYPES = ['image.create', 'image.renew', 'image.delete'];

/**
 * Server images, prepaid like snapshots (at the region's snapshot price per GB-month, times the
 * image's `disk_gb`):
 *
 * - `server_images`: an organization's copy of a server's boot disk, bought for a term; it
 *   outlives its server (no foreign key to the server's life). `operation_id` names the image's
 *   unfinished operation (one at a time, set under the row's lock). The catalog's images stay in
 *   `images`; ids never collide (`img_` prefix here).
 * - Quota in the database: `org_image_counts` counts the live (not deleted) images of an
 *   organization, kept by a trigger on `server_images` in the writer's transaction, with a CHECK
 *   at 100: two creates racing for the last slot serialise on the counter row, and the second is
 *   refused by the CHECK.
 * - `servers.image_id` names a catalog image or one of the server's organization's images: its
 *   foreign key to `images` becomes triggers that check either (the same organization's) on the
 *   server's side, and refuse to remove or rename an image a server names on the images' side.
 * - The simulated compute provider keeps its images in `provider_images`.
 * - operations_type_check gains the image operations, edited from its current definition.
 */
export class ServerImages1764000000460 implements MigrationInterface {
  name = 'ServerImages1764000000460';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE server_images (
        id                     text PRIMARY KEY CHECK (id LIKE 'img\\_%'),
        org_id                 text NOT NULL REFERENCES organizations(id),
        name                   text NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
        status                 text NOT NULL CHECK (status IN ('creating', 'available', 'suspended', 'deleting', 'deleted')),
        from_server_id         text NOT NULL REFERENCES servers(id),
        region_id              text NOT NULL REFERENCES regions(id),
        disk_gb                integer NOT NULL CHECK (disk_gb > 0),
        os                     text,
        term_months            integer NOT NULL CHECK (term_months IN (1, 3, 12)),
        billing_currency       text NOT NULL CHECK (billing_currency IN ('USD', 'IDR')),
        billing_amount         numeric NOT NULL CHECK (billing_amount >= 0),
        price_usd_minor        numeric NOT NULL CHECK (price_usd_minor >= 0),
        price_idr_minor        numeric NOT NULL CHECK (price_idr_minor >= 0),
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
        CONSTRAINT server_images_deleted_at CHECK ((status = 'deleted') = (deleted_at IS NOT NULL)),
        CONSTRAINT server_images_suspended_times CHECK ((status <> 'suspended' OR suspended_at IS NOT NULL) AND (suspended_at IS NULL) = (release_at IS NULL))
      );
      CREATE INDEX server_images_org_created_idx ON server_images (org_id, created_at DESC, id DESC);
      CREATE INDEX server_images_server_idx ON server_images (from_server_id);
      CREATE INDEX server_images_expiry_due_idx ON server_images (expires_at) WHERE status = 'available';
      CREATE INDEX server_images_release_due_idx ON server_images (release_at) WHERE status = 'suspended';

      CREATE TABLE org_image_counts (
        org_id text PRIMARY KEY,
        live   integer NOT NULL CHECK (live >= 0),
        CONSTRAINT org_images_within_limit CHECK (live <= 100)
      );
      CREATE FUNCTION server_images_count_live() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          IF NEW.status <> 'deleted' THEN
            INSERT INTO org_image_counts AS c (org_id, live) VALUES (NEW.org_id, 1)
              ON CONFLICT (org_id) DO UPDATE SET live = c.live + 1;
          END IF;
        ELSIF OLD.status <> 'deleted' AND NEW.status = 'deleted' THEN
          UPDATE org_image_counts SET live = live - 1 WHERE org_id = NEW.org_id;
        END IF;
        RETURN NULL;
      END $fn$;
      CREATE TRIGGER server_images_count_live AFTER INSERT OR UPDATE OF status ON server_images
        FOR EACH ROW EXECUTE FUNCTION server_images_count_live();

      CREATE TABLE provider_images (
        image_id     text PRIMARY KEY,
        provider_id  text NOT NULL UNIQUE,
        server_id    text NOT NULL,
        zone_id      text NOT NULL,
        disk_gb      integer CHECK (disk_gb > 0),
        source_image text,
        created_at   timestamptz NOT NULL DEFAULT now(),
        deleted_at   timestamptz
      );
    `);
    // servers.image_id: a catalog image, or an image of the server's own organization.
    await q.query(`
      DO $do$
      DECLARE c text;
      BEGIN
        SELECT conname INTO c FROM pg_constraint
         WHERE conrelid = 'servers'::regclass AND contype = 'f' AND conkey = ARRAY[(SELECT attnum FROM pg_attribute WHERE attrelid = 'servers'::regclass AND attname = 'image_id')];
        IF c IS NOT NULL THEN EXECUTE format('ALTER TABLE servers DROP CONSTRAINT %I', c); END IF;
      END $do$;
      CREATE FUNCTION servers_image_exists() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        IF NEW.image_id IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM images WHERE id = NEW.image_id)
           AND NOT EXISTS (SELECT 1 FROM server_images WHERE id = NEW.image_id AND org_id = NEW.org_id) THEN
          RAISE EXCEPTION 'servers.image_id % is neither a catalog image nor an image of organization %', NEW.image_id, NEW.org_id
            USING ERRCODE = '23503', CONSTRAINT = 'servers_image_id_exists';
        END IF;
        RETURN NEW;
      END $fn$;
      CREATE TRIGGER servers_image_exists BEFORE INSERT OR UPDATE OF image_id ON servers
        FOR EACH ROW EXECUTE FUNCTION servers_image_exists();
      -- The other side of the reference: an image (of the catalog, or an organization's row) a server names is not removed nor renamed.
      CREATE FUNCTION images_still_used() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        IF (TG_OP = 'DELETE' OR NEW.id IS DISTINCT FROM OLD.id) AND EXISTS (SELECT 1 FROM servers WHERE image_id = OLD.id) THEN
          RAISE EXCEPTION 'image % is named by a server', OLD.id USING ERRCODE = '23503', CONSTRAINT = 'servers_image_id_exists';
        END IF;
        RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
      END $fn$;
      CREATE TRIGGER images_still_used BEFORE DELETE OR UPDATE OF id ON images
        FOR EACH ROW EXECUTE FUNCTION images_still_used();
      CREATE TRIGGER server_images_still_used BEFORE DELETE OR UPDATE OF id ON server_images
        FOR EACH ROW EXECUTE FUNCTION images_still_used();
    `);
    await q.query(`
      ${editOperationTypes('add', TYPES)}
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ${editOperationTypes('remove', TYPES)}
      DROP TRIGGER server_images_still_used ON server_images;
      DROP TRIGGER images_still_used ON images;
      DROP FUNCTION images_still_used();
      DROP TRIGGER servers_image_exists ON servers;
      DROP FUNCTION servers_image_exists();
      ALTER TABLE servers ADD CONSTRAINT servers_image_id_fkey FOREIGN KEY (image_id) REFERENCES images(id);
      DROP TABLE provider_images;
      DROP TRIGGER server_images_count_live ON server_images;
      DROP FUNCTION server_images_count_live();
      DROP TABLE org_image_counts, server_images;
    `);
  }
}
