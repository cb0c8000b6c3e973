import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * terms.md "Automatic renewal": servers and volumes gain `auto_renew` (enabled, term_months, the
 * last attempt as shown, and when the next one is due), and the attempts' table whose unique key
 * keeps one accepted automatic renewal per (resource, expires_at) across any number of processes.
 *
 * Hidden columns: `auto_renew_lead_s` (AUTO_RENEW_LEAD_S when it was last written),
 * `auto_renew_retry_at` (after a failed attempt: when the next comes; 'infinity' once an attempt
 * was accepted for this expires_at), `auto_renew_wallet_seq` (after a failed attempt: the
 * wallet's last ledger position then; a credit after it in the currency wakes the resource up).
 * A trigger keeps `auto_renew_next_at` = greatest(expires_at - lead, retry_at) while enabled and
 * live (null otherwise, and null while an accepted renewal runs), and starts afresh when
 * expires_at moves (a renewal) or auto-renew is turned on again.
 */
export class AutoRenew1764000000342 implements MigrationInterface {
  name = 'AutoRenew1764000000342';

  async up(q: QueryRunner): Promise<void> {
    const columns = `
        ADD COLUMN auto_renew_enabled boolean NOT NULL DEFAULT false,
        ADD COLUMN auto_renew_term_months integer CHECK (auto_renew_term_months IN (1, 3, 12)),
        ADD COLUMN auto_renew_lead_s integer NOT NULL DEFAULT 259200 CHECK (auto_renew_lead_s >= 0),
        ADD COLUMN auto_renew_retry_at timestamptz,
        ADD COLUMN auto_renew_wallet_seq bigint,
        ADD COLUMN auto_renew_last_attempt jsonb,
        ADD COLUMN auto_renew_next_at timestamptz`;
    await q.query(`
      ALTER TABLE volumes ${columns};
      ALTER TABLE servers ${columns};

      CREATE FUNCTION auto_renew_schedule() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        IF TG_OP = 'UPDATE' THEN
          IF NEW.expires_at IS DISTINCT FROM OLD.expires_at OR (NEW.auto_renew_enabled AND NOT OLD.auto_renew_enabled) THEN
            NEW.auto_renew_retry_at := NULL;
            NEW.auto_renew_wallet_seq := NULL;
          END IF;
        END IF;
        NEW.auto_renew_next_at := CASE
          WHEN NEW.auto_renew_enabled AND NEW.deleted_at IS NULL AND NEW.status NOT IN ('deleting', 'deleted')
               AND NEW.expires_at IS NOT NULL AND NEW.auto_renew_retry_at IS DISTINCT FROM 'infinity'::timestamptz
          THEN greatest(NEW.expires_at - make_interval(secs => NEW.auto_renew_lead_s), NEW.auto_renew_retry_at)
        END;
        RETURN NEW;
      END
      $fn$;
      CREATE TRIGGER volumes_auto_renew_schedule BEFORE INSERT OR UPDATE ON volumes FOR EACH ROW EXECUTE FUNCTION auto_renew_schedule();
      CREATE TRIGGER servers_auto_renew_schedule BEFORE INSERT OR UPDATE ON servers FOR EACH ROW EXECUTE FUNCTION auto_renew_schedule();

      -- The sweep's deadline, and the resources waiting for a wallet credit after a failed attempt.
      CREATE INDEX volumes_auto_renew_due_idx ON volumes (auto_renew_next_at) WHERE auto_renew_next_at IS NOT NULL;
      CREATE INDEX servers_auto_renew_due_idx ON servers (auto_renew_next_at) WHERE auto_renew_next_at IS NOT NULL;
      CREATE INDEX volumes_auto_renew_waiting_idx ON volumes (org_id) WHERE auto_renew_wallet_seq IS NOT NULL AND auto_renew_next_at IS NOT NULL;
      CREATE INDEX servers_auto_renew_waiting_idx ON servers (org_id) WHERE auto_renew_wallet_seq IS NOT NULL AND auto_renew_next_at IS NOT NULL;

      CREATE TABLE auto_renew_attempts (
        id            bigserial PRIMARY KEY,
        resource_id   text NOT NULL,
        org_id        text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        expires_at    timestamptz NOT NULL,
        at            timestamptz NOT NULL,
        outcome       text NOT NULL CHECK (outcome IN ('accepted', 'insufficient_balance')),
        operation_id  text REFERENCES operations(id),
        CHECK ((outcome = 'accepted') = (operation_id IS NOT NULL))
      );
      -- One automatic renewal accepted per term end, whatever the processes.
      CREATE UNIQUE INDEX auto_renew_attempts_one_accepted ON auto_renew_attempts (resource_id, expires_at) WHERE outcome = 'accepted';
      CREATE INDEX auto_renew_attempts_resource_idx ON auto_renew_attempts (resource_id, id);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    const columns = `DROP COLUMN auto_renew_enabled, DROP COLUMN auto_renew_term_months, DROP COLUMN auto_renew_lead_s, DROP COLUMN auto_renew_retry_at,
      DROP COLUMN auto_renew_wallet_seq, DROP COLUMN auto_renew_last_attempt, DROP COLUMN auto_renew_next_at`;
    await q.query(`
      DROP TABLE auto_renew_attempts;
      DROP TRIGGER servers_auto_renew_schedule ON servers; DROP TRIGGER volumes_auto_renew_schedule ON volumes; DROP FUNCTION auto_renew_schedule();
      ALTER TABLE servers ${columns};
      ALTER TABLE volumes ${columns};
    `);
  }
}
