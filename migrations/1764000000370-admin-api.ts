import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The admin API (admin.md): staff accounts and their tokens (stored as SHA-256 only), the staff
 * audit (one row per admin request), staff as an actor of the customer's audit log, per
 * organization limits and suspension, and the wallet's two new movements: adjustments (a credit or
 * a debit by billing staff, with a reason shown to the customer) and refunds of top-ups. Each
 * adjustment and each refund is in the ledger at most once (unique indexes), and a debit never
 * takes available below zero (wallet_balances' CHECK).
 */
export class AdminApi1764000000370 implements MigrationInterface {
  name = 'AdminApi1764000000370';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE staff (
        id          text PRIMARY KEY,
        email       text NOT NULL CHECK (email = lower(email) AND length(email) BETWEEN 3 AND 254),
        name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        role        text NOT NULL CHECK (role IN ('support', 'billing', 'operator', 'superadmin')),
        created_at  timestamptz NOT NULL DEFAULT now(),
        disabled_at timestamptz
      );
      CREATE UNIQUE INDEX staff_email_key ON staff (email);

      CREATE TABLE staff_tokens (
        id           text PRIMARY KEY,
        staff_id     text NOT NULL REFERENCES staff(id),
        token_hash   bytea NOT NULL UNIQUE,
        token_prefix text NOT NULL,
        created_at   timestamptz NOT NULL DEFAULT now(),
        expires_at   timestamptz NOT NULL,
        revoked_at   timestamptz
      );
      CREATE INDEX staff_tokens_staff_idx ON staff_tokens (staff_id);

      CREATE TABLE staff_audit (
        id              bigserial PRIMARY KEY,
        public_id       text NOT NULL UNIQUE,
        staff_id        text NOT NULL REFERENCES staff(id),
        role            text NOT NULL,
        method          text NOT NULL,
        route           text NOT NULL,
        organization_id text,
        target_type     text,
        target_id       text,
        justification   text,
        request_id      text,
        ip              text,
        status          integer NOT NULL,
        created_at      timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX staff_audit_created_idx ON staff_audit (created_at DESC, id DESC);
      CREATE INDEX staff_audit_staff_idx ON staff_audit (staff_id, created_at DESC, id DESC);
      CREATE INDEX staff_audit_org_idx ON staff_audit (organization_id, created_at DESC, id DESC) WHERE organization_id IS NOT NULL;

      ALTER TABLE audit_log DROP CONSTRAINT audit_log_actor_type_check;
      ALTER TABLE audit_log ADD CONSTRAINT audit_log_actor_type_check CHECK (actor_type IN ('user', 'api_key', 'system', 'anonymous', 'staff'));

      ALTER TABLE organizations
        ADD COLUMN suspended_at timestamptz,
        ADD COLUMN suspension_reason text,
        ADD COLUMN server_limit integer CHECK (server_limit BETWEEN 0 AND 100000),
        ADD COLUMN api_key_limit integer CHECK (api_key_limit BETWEEN 0 AND 100000),
        ADD COLUMN firewall_rule_limit integer CHECK (firewall_rule_limit BETWEEN 0 AND 100000),
        ADD CONSTRAINT organizations_suspension CHECK ((suspended_at IS NULL) = (suspension_reason IS NULL));

      CREATE TABLE wallet_adjustments (
        id          text PRIMARY KEY,
        org_id      text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        staff_id    text REFERENCES staff(id),
        currency    text NOT NULL CHECK (currency IN ('USD', 'IDR')),
        amount      numeric(38,0) NOT NULL CHECK (amount > 0),
        direction   text NOT NULL CHECK (direction IN ('credit', 'debit')),
        reason      text NOT NULL CHECK (length(reason) BETWEEN 1 AND 500),
        reference   text,
        created_at  timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX wallet_adjustments_org_idx ON wallet_adjustments (org_id, created_at);

      ALTER TABLE wallet_ledger
        ADD COLUMN adjustment_id text REFERENCES wallet_adjustments(id),
        ADD COLUMN refund_id text,
        DROP CONSTRAINT wallet_ledger_kind_check,
        ADD CONSTRAINT wallet_ledger_kind_check CHECK (kind IN ('credit', 'hold', 'capture', 'release', 'adjustment_credit', 'adjustment_debit', 'refund')),
        DROP CONSTRAINT wallet_ledger_check,
        ADD CONSTRAINT wallet_ledger_operation_kinds CHECK ((kind IN ('hold', 'capture', 'release')) = (operation_id IS NOT NULL)),
        ADD CONSTRAINT wallet_ledger_adjustment_kinds CHECK ((kind IN ('adjustment_credit', 'adjustment_debit')) = (adjustment_id IS NOT NULL)),
        ADD CONSTRAINT wallet_ledger_refund_kind CHECK ((kind = 'refund') = (refund_id IS NOT NULL));
      -- Each adjustment and each refund moves the wallet once, whatever the retries.
      CREATE UNIQUE INDEX wallet_ledger_one_adjustment ON wallet_ledger (adjustment_id) WHERE adjustment_id IS NOT NULL;
      CREATE UNIQUE INDEX wallet_ledger_one_refund ON wallet_ledger (refund_id) WHERE refund_id IS NOT NULL;

      CREATE OR REPLACE FUNCTION wallet_ledger_position() RETURNS trigger LANGUAGE plpgsql AS $fn$
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
          + CASE NEW.kind WHEN 'credit' THEN NEW.amount WHEN 'adjustment_credit' THEN NEW.amount WHEN 'hold' THEN -NEW.amount
                          WHEN 'release' THEN NEW.amount WHEN 'adjustment_debit' THEN -NEW.amount WHEN 'refund' THEN -NEW.amount ELSE 0 END;
        NEW.reserved_after := coalesce(prev_reserved, 0)
          + CASE NEW.kind WHEN 'hold' THEN NEW.amount WHEN 'capture' THEN -NEW.amount WHEN 'release' THEN -NEW.amount ELSE 0 END;
        IF NEW.public_id IS NULL THEN
          NEW.public_id := 'wtx_' || replace(gen_random_uuid()::text, '-', '');
        END IF;
        RETURN NEW;
      END
      $fn$;

      CREATE TABLE top_up_refunds (
        id           text PRIMARY KEY,
        top_up_id    text NOT NULL REFERENCES top_ups(id),
        org_id       text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        currency     text NOT NULL CHECK (currency IN ('USD', 'IDR')),
        amount       numeric(38,0) NOT NULL CHECK (amount > 0),
        reason       text NOT NULL CHECK (length(reason) BETWEEN 1 AND 500),
        status       text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
        provider_refund_id text UNIQUE,
        staff_id     text REFERENCES staff(id),
        created_at   timestamptz NOT NULL DEFAULT now(),
        updated_at   timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX top_up_refunds_top_up_idx ON top_up_refunds (top_up_id);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TABLE top_up_refunds;
      DROP INDEX wallet_ledger_one_refund;
      DROP INDEX wallet_ledger_one_adjustment;
      ALTER TABLE wallet_ledger
        DROP CONSTRAINT wallet_ledger_refund_kind,
        DROP CONSTRAINT wallet_ledger_adjustment_kinds,
        DROP CONSTRAINT wallet_ledger_operation_kinds,
        DROP CONSTRAINT wallet_ledger_kind_check,
        ADD CONSTRAINT wallet_ledger_kind_check CHECK (kind IN ('credit', 'hold', 'capture', 'release')),
        ADD CONSTRAINT wallet_ledger_check CHECK ((kind = 'credit') = (operation_id IS NULL)),
        DROP COLUMN refund_id,
        DROP COLUMN adjustment_id;
      DROP TABLE wallet_adjustments;
      ALTER TABLE organizations DROP CONSTRAINT organizations_suspension,
        DROP COLUMN suspended_at, DROP COLUMN suspension_reason, DROP COLUMN server_limit, DROP COLUMN api_key_limit, DROP COLUMN firewall_rule_limit;
      ALTER TABLE audit_log DROP CONSTRAINT audit_log_actor_type_check;
      ALTER TABLE audit_log ADD CONSTRAINT audit_log_actor_type_check CHECK (actor_type IN ('user', 'api_key', 'system', 'anonymous'));
      DROP TABLE staff_audit;
      DROP TABLE staff_tokens;
      DROP TABLE staff;
    `);
  }
}
