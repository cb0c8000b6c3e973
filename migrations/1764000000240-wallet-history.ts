import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The wallet's history (GET /v1/wallet/transactions): every ledger row gets a public id, its
 * position in the organization's ledger (`seq`), and the balance of its currency right after it
 * (`available_after`, `reserved_after`); a credit may name the top-up it fulfils (`top_up_id`,
 * at most one credit per top-up, whatever the concurrency).
 *
 * A BEFORE INSERT trigger takes the organization's wallet_heads row (as audit_log's trigger takes
 * audit_heads): `seq` = next, `created_at` = greatest(now(), last_at), and the after-values = the
 * previous row of that organization and currency plus this movement. The head row stays locked
 * to the commit, so an organization's rows commit in `seq` order: a reader paging by `seq` never
 * skips or repeats a row, and `since`/`until` are `seq` bounds. Every writer locks the balance
 * rows first (in organization, currency order), then the ledger head, then the audit head.
 *
 * Existing rows get `seq` and after-values by running sums in id order.
 */
export class WalletHistory1764000000240 implements MigrationInterface {
  name = 'WalletHistory1764000000240';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE wallet_heads (
        org_id   text PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
        last_seq bigint NOT NULL,
        last_at  timestamptz NOT NULL
      );

      ALTER TABLE wallet_ledger
        ADD COLUMN public_id text,
        ADD COLUMN seq bigint,
        ADD COLUMN available_after numeric(38,0),
        ADD COLUMN reserved_after numeric(38,0),
        ADD COLUMN top_up_id text;

      ALTER TABLE wallet_ledger DISABLE TRIGGER wallet_ledger_no_update;
      UPDATE wallet_ledger l
         SET public_id = 'wtx_' || replace(gen_random_uuid()::text, '-', ''),
             seq = r.seq, available_after = r.available_after, reserved_after = r.reserved_after
        FROM (
          SELECT id,
                 row_number() OVER (PARTITION BY org_id ORDER BY id) AS seq,
                 sum(CASE kind WHEN 'credit' THEN amount WHEN 'hold' THEN -amount WHEN 'release' THEN amount ELSE 0 END)
                   OVER (PARTITION BY org_id, currency ORDER BY id) AS available_after,
                 sum(CASE kind WHEN 'hold' THEN amount WHEN 'credit' THEN 0 ELSE -amount END)
                   OVER (PARTITION BY org_id, currency ORDER BY id) AS reserved_after
            FROM wallet_ledger
        ) r
       WHERE r.id = l.id;
      ALTER TABLE wallet_ledger ENABLE TRIGGER wallet_ledger_no_update;

      INSERT INTO wallet_heads (org_id, last_seq, last_at)
      SELECT org_id, max(seq), max(created_at) FROM wallet_ledger GROUP BY org_id;

      ALTER TABLE wallet_ledger
        ALTER COLUMN public_id SET NOT NULL,
        ALTER COLUMN seq SET NOT NULL,
        ALTER COLUMN available_after SET NOT NULL,
        ALTER COLUMN reserved_after SET NOT NULL,
        ADD CONSTRAINT wallet_ledger_public_id_key UNIQUE (public_id),
        ADD CONSTRAINT wallet_ledger_top_up_credit CHECK (top_up_id IS NULL OR kind = 'credit');
      -- A top-up is credited at most once, under any concurrency or order of its events.
      CREATE UNIQUE INDEX wallet_ledger_one_top_up_credit ON wallet_ledger (top_up_id) WHERE top_up_id IS NOT NULL;
      CREATE UNIQUE INDEX wallet_ledger_org_seq ON wallet_ledger (org_id, seq);
      -- The previous row of an organization and currency (the trigger), sums per currency (verify).
      DROP INDEX wallet_ledger_org_idx;
      CREATE INDEX wallet_ledger_org_currency_seq ON wallet_ledger (org_id, currency, seq);
      -- since/until of the history: the first row at or after an instant, one probe.
      CREATE INDEX wallet_ledger_org_created ON wallet_ledger (org_id, created_at, seq);

      CREATE FUNCTION wallet_ledger_position() RETURNS trigger LANGUAGE plpgsql AS $fn$
      DECLARE
        prev_available numeric;
        prev_reserved numeric;
      BEGIN
        INSERT INTO wallet_heads AS h (org_id, last_seq, last_at) VALUES (NEW.org_id, 1, NEW.created_at)
        ON CONFLICT (org_id) DO UPDATE SET last_seq = h.last_seq + 1, last_at = greatest(h.last_at, EXCLUDED.last_at)
        RETURNING last_seq, last_at INTO NEW.seq, NEW.created_at;
        SELECT available_after, reserved_after INTO prev_available, prev_reserved
          FROM wallet_ledger WHERE org_id = NEW.org_id AND currency = NEW.currency
         ORDER BY seq DESC LIMIT 1;
        NEW.available_after := coalesce(prev_available, 0)
          + CASE NEW.kind WHEN 'credit' THEN NEW.amount WHEN 'hold' THEN -NEW.amount WHEN 'release' THEN NEW.amount ELSE 0 END;
        NEW.reserved_after := coalesce(prev_reserved, 0)
          + CASE NEW.kind WHEN 'hold' THEN NEW.amount WHEN 'credit' THEN 0 ELSE -NEW.amount END;
        IF NEW.public_id IS NULL THEN
          NEW.public_id := 'wtx_' || replace(gen_random_uuid()::text, '-', '');
        END IF;
        RETURN NEW;
      END
      $fn$;
      CREATE TRIGGER wallet_ledger_position BEFORE INSERT ON wallet_ledger
        FOR EACH ROW EXECUTE FUNCTION wallet_ledger_position();
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER wallet_ledger_position ON wallet_ledger;
      DROP FUNCTION wallet_ledger_position();
      DROP INDEX wallet_ledger_org_created;
      DROP INDEX wallet_ledger_org_currency_seq;
      CREATE INDEX wallet_ledger_org_idx ON wallet_ledger (org_id, currency, id);
      DROP INDEX wallet_ledger_org_seq;
      DROP INDEX wallet_ledger_one_top_up_credit;
      ALTER TABLE wallet_ledger DROP CONSTRAINT wallet_ledger_top_up_credit, DROP CONSTRAINT wallet_ledger_public_id_key,
        DROP COLUMN public_id, DROP COLUMN seq, DROP COLUMN available_after, DROP COLUMN reserved_after, DROP COLUMN top_up_id;
      DROP TABLE wallet_heads;
    `);
  }
}
