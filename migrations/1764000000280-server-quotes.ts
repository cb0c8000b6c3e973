import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Server quotes (servers.md "Server and buying"): a quote is of a disk order (`kind` volume:
 * type, size_gb) or of a server order (`kind` server: plan_id), both with region, term,
 * currency, the frozen prices and amount. A server quote's amount is the plan's monthly price
 * × term_months, exactly. A quote is used once, by the volume or the server its purchase created.
 */
export class ServerQuotes1764000000280 implements MigrationInterface {
  name = 'ServerQuotes1764000000280';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE quotes
        ADD COLUMN kind text NOT NULL DEFAULT 'volume' CHECK (kind IN ('volume', 'server')),
        ADD COLUMN plan_id text REFERENCES server_plans(id),
        ADD COLUMN server_id text REFERENCES servers(id),
        ALTER COLUMN type DROP NOT NULL,
        ALTER COLUMN size_gb DROP NOT NULL,
        DROP CONSTRAINT quotes_amount_exact,
        DROP CONSTRAINT quotes_used_by_volume;
      ALTER TABLE quotes
        ADD CONSTRAINT quotes_kind_members CHECK (
          (kind = 'volume' AND type IS NOT NULL AND size_gb IS NOT NULL AND plan_id IS NULL AND server_id IS NULL)
          OR (kind = 'server' AND type IS NULL AND size_gb IS NULL AND plan_id IS NOT NULL AND volume_id IS NULL)),
        -- The frozen amount is exactly the frozen price for the order: (size ×) price × term.
        ADD CONSTRAINT quotes_amount_exact CHECK (
          amount = CASE kind WHEN 'volume' THEN size_gb::numeric ELSE 1 END * term_months
                   * CASE currency WHEN 'USD' THEN price_usd_minor ELSE price_idr_minor END),
        -- Used once, by one purchase: set together, by a conditional UPDATE ... WHERE used_at IS NULL.
        ADD CONSTRAINT quotes_used_once CHECK ((used_at IS NULL) = (volume_id IS NULL AND server_id IS NULL)),
        ADD CONSTRAINT quotes_server_id_key UNIQUE (server_id);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DELETE FROM quotes WHERE kind = 'server';
      ALTER TABLE quotes
        DROP CONSTRAINT quotes_server_id_key, DROP CONSTRAINT quotes_used_once, DROP CONSTRAINT quotes_amount_exact,
        DROP CONSTRAINT quotes_kind_members, DROP COLUMN server_id, DROP COLUMN plan_id, DROP COLUMN kind,
        ALTER COLUMN type SET NOT NULL, ALTER COLUMN size_gb SET NOT NULL;
      ALTER TABLE quotes
        ADD CONSTRAINT quotes_amount_exact CHECK (
          amount = size_gb::numeric * term_months * CASE currency WHEN 'USD' THEN price_usd_minor ELSE price_idr_minor END),
        ADD CONSTRAINT quotes_used_by_volume CHECK ((used_at IS NULL) = (volume_id IS NULL));
    `);
  }
}
