import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * lifecycle.md "Volume, extended" and "Quotes": labels and delete_protection on volumes, the
 * name rules and a name unique among an organization's volumes that are not deleted, and the
 * quotes table.
 *
 * Existing rows are made to satisfy the new rules first (seed files allowed any 1-200
 * characters and did not refuse duplicates): a name breaking the rules has every other
 * character replaced by "-" (a leading "." "_" "-" becomes "v", cut to 64 characters); among
 * live volumes of one organization sharing a name, the oldest keeps it and the others get
 * "-" and their id without "vol_" appended (cut to 64).
 */
export class VolumeLabelsAndQuotes1764000000120 implements MigrationInterface {
  name = 'VolumeLabelsAndQuotes1764000000120';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      UPDATE volumes
         SET name = left(regexp_replace(regexp_replace(CASE WHEN name = '' THEN 'volume' ELSE name END,
                                                       '[^A-Za-z0-9._-]', '-', 'g'), '^[._-]', 'v'), 64)
       WHERE name !~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$';

      UPDATE volumes v
         SET name = left(left(v.name, 32) || '-' || substr(v.id, 5), 64)
        FROM (SELECT id, row_number() OVER (PARTITION BY org_id, name ORDER BY created_at, id) AS n
                FROM volumes WHERE deleted_at IS NULL) d
       WHERE d.id = v.id AND d.n > 1;

      -- Labels: at most 32; keys 1-63 of [a-z0-9._/-]; values strings of at most 255 characters
      -- (jsonb cannot hold NUL). The application checks the same and names the bad member.
      CREATE FUNCTION volume_labels_valid(labels jsonb) RETURNS boolean LANGUAGE sql IMMUTABLE AS $fn$
        SELECT jsonb_typeof(labels) = 'object'
           AND (SELECT count(*) FROM jsonb_object_keys(labels)) <= 32
           AND NOT EXISTS (SELECT 1 FROM jsonb_each(labels) e
                            WHERE e.key !~ '^[a-z0-9._/-]{1,63}$'
                               OR jsonb_typeof(e.value) <> 'string'
                               OR length(e.value #>> '{}') > 255)
      $fn$;

      ALTER TABLE volumes
        ADD COLUMN labels jsonb NOT NULL DEFAULT '{}'::jsonb,
        ADD COLUMN delete_protection boolean NOT NULL DEFAULT false,
        ADD CONSTRAINT volumes_labels_valid CHECK (volume_labels_valid(labels)),
        ADD CONSTRAINT volumes_name_valid CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$');

      -- A name is unique among the organization's volumes that are not deleted (409 conflict);
      -- this index is what enforces it, also between concurrent requests. It also serves ?name=.
      CREATE UNIQUE INDEX volumes_org_name_live_key ON volumes (org_id, name) WHERE deleted_at IS NULL;
      -- The default listing (not deleted, newest first) and every filter on top of it;
      -- ?label= uses the GIN index (labels @> '{"k":"v"}').
      CREATE INDEX volumes_org_live_created_idx ON volumes (org_id, created_at DESC, id DESC) WHERE deleted_at IS NULL;
      CREATE INDEX volumes_labels_idx ON volumes USING gin (labels jsonb_path_ops);

      CREATE TABLE quotes (
        id               text PRIMARY KEY,
        org_id           text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        region_id        text NOT NULL REFERENCES regions(id),
        type             text NOT NULL CHECK (type IN ('premium', 'ssd')),
        size_gb          integer NOT NULL CHECK (size_gb > 0),
        term_months      integer NOT NULL CHECK (term_months IN (1, 3, 12)),
        currency         text NOT NULL CHECK (currency IN ('USD', 'IDR')),
        price_usd_minor  numeric(38,0) NOT NULL CHECK (price_usd_minor >= 0),
        price_idr_minor  numeric(38,0) NOT NULL CHECK (price_idr_minor >= 0),
        amount           numeric(38,0) NOT NULL,
        created_at       timestamptz NOT NULL,
        expires_at       timestamptz NOT NULL,
        used_at          timestamptz,
        volume_id        text REFERENCES volumes(id),
        -- The frozen amount is exactly the frozen price for the order: size × price × term.
        CONSTRAINT quotes_amount_exact CHECK (
          amount = size_gb::numeric * term_months * CASE currency WHEN 'USD' THEN price_usd_minor ELSE price_idr_minor END),
        CONSTRAINT quotes_ten_minutes CHECK (expires_at = created_at + interval '10 minutes'),
        -- Used once, by one purchase: set together, by a conditional UPDATE ... WHERE used_at IS NULL.
        CONSTRAINT quotes_used_by_volume CHECK ((used_at IS NULL) = (volume_id IS NULL)),
        CONSTRAINT quotes_volume_id_key UNIQUE (volume_id)
      );
      CREATE INDEX quotes_org_created_idx ON quotes (org_id, created_at DESC);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TABLE IF EXISTS quotes;
      DROP INDEX IF EXISTS volumes_labels_idx, volumes_org_live_created_idx, volumes_org_name_live_key;
      ALTER TABLE volumes DROP CONSTRAINT IF EXISTS volumes_name_valid, DROP CONSTRAINT IF EXISTS volumes_labels_valid,
        DROP COLUMN IF EXISTS delete_protection, DROP COLUMN IF EXISTS labels;
      DROP FUNCTION IF EXISTS volume_labels_valid(jsonb);
    `);
  }
}
