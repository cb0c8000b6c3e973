import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Refunds of top-ups (admin.md "Money"): a top-up keeps the total refunded (`refunded_amount`,
 * never above its amount) and reads `partially_refunded` or `refunded`; a refund's debit row in
 * the ledger names its top-up (the unique credit per top-up stays credits-only); a refund records
 * its provider, the reason a provider refused it, and when the worker asks the provider again
 * about one still pending. The simulated provider keeps its refunds in its own table, one per
 * refund id (its idempotency key).
 */
export class TopUpRefunds1764000000371 implements MigrationInterface {
  name = 'TopUpRefunds1764000000371';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE top_ups
        ADD COLUMN refunded_amount numeric(38,0) NOT NULL DEFAULT 0,
        DROP CONSTRAINT top_ups_status_check,
        ADD CONSTRAINT top_ups_status_check CHECK (status IN ('pending', 'succeeded', 'failed', 'canceled', 'expired', 'partially_refunded', 'refunded')),
        DROP CONSTRAINT top_ups_check,
        ADD CONSTRAINT top_ups_paid CHECK ((status IN ('succeeded', 'partially_refunded', 'refunded')) = (paid_at IS NOT NULL)),
        ADD CONSTRAINT top_ups_refunded CHECK (
          refunded_amount >= 0 AND refunded_amount <= amount AND
          CASE status WHEN 'refunded' THEN refunded_amount = amount
                      WHEN 'partially_refunded' THEN refunded_amount > 0 AND refunded_amount < amount
                      ELSE refunded_amount = 0 END);

      ALTER TABLE top_up_refunds
        ADD COLUMN provider text NOT NULL DEFAULT 'simulated',
        ADD COLUMN failure_reason text,
        ADD COLUMN attempts integer NOT NULL DEFAULT 0,
        ADD COLUMN next_attempt_at timestamptz,
        ADD CONSTRAINT top_up_refunds_failed CHECK ((status = 'failed') = (failure_reason IS NOT NULL)),
        ADD CONSTRAINT top_up_refunds_succeeded CHECK (status <> 'succeeded' OR provider_refund_id IS NOT NULL),
        ADD CONSTRAINT top_up_refunds_pending CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL));
      ALTER TABLE top_up_refunds ALTER COLUMN provider DROP DEFAULT;
      CREATE INDEX top_up_refunds_due ON top_up_refunds (next_attempt_at) WHERE status = 'pending';

      ALTER TABLE wallet_ledger
        DROP CONSTRAINT wallet_ledger_top_up_credit,
        ADD CONSTRAINT wallet_ledger_top_up_kinds CHECK (top_up_id IS NULL OR kind IN ('credit', 'refund')),
        ADD CONSTRAINT wallet_ledger_refund_top_up CHECK (kind <> 'refund' OR top_up_id IS NOT NULL);
      DROP INDEX wallet_ledger_one_top_up_credit;
      -- One credit per top-up, whatever the concurrency; its refunds' debits name it too.
      CREATE UNIQUE INDEX wallet_ledger_one_top_up_credit ON wallet_ledger (top_up_id) WHERE top_up_id IS NOT NULL AND kind = 'credit';
      CREATE INDEX wallet_ledger_top_up_refunds ON wallet_ledger (top_up_id) WHERE top_up_id IS NOT NULL AND kind = 'refund';

      CREATE TABLE sim_refunds (
        id             text PRIMARY KEY,
        refund_id      text NOT NULL UNIQUE,
        session_id     text NOT NULL REFERENCES sim_checkout_sessions(id) ON DELETE CASCADE,
        currency       text NOT NULL,
        amount         numeric(38,0) NOT NULL CHECK (amount > 0),
        status         text NOT NULL CHECK (status IN ('succeeded', 'failed')),
        failure_reason text,
        created_at     timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX sim_refunds_session ON sim_refunds (session_id);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TABLE sim_refunds;
      DROP INDEX wallet_ledger_top_up_refunds;
      DROP INDEX wallet_ledger_one_top_up_credit;
      CREATE UNIQUE INDEX wallet_ledger_one_top_up_credit ON wallet_ledger (top_up_id) WHERE top_up_id IS NOT NULL;
      ALTER TABLE wallet_ledger
        DROP CONSTRAINT wallet_ledger_refund_top_up,
        DROP CONSTRAINT wallet_ledger_top_up_kinds,
        ADD CONSTRAINT wallet_ledger_top_up_credit CHECK (top_up_id IS NULL OR kind = 'credit');
      DROP INDEX top_up_refunds_due;
      ALTER TABLE top_up_refunds
        DROP CONSTRAINT top_up_refunds_pending, DROP CONSTRAINT top_up_refunds_succeeded, DROP CONSTRAINT top_up_refunds_failed,
        DROP COLUMN next_attempt_at, DROP COLUMN attempts, DROP COLUMN failure_reason, DROP COLUMN provider;
      ALTER TABLE top_ups
        DROP CONSTRAINT top_ups_refunded, DROP CONSTRAINT top_ups_paid, DROP CONSTRAINT top_ups_status_check,
        ADD CONSTRAINT top_ups_status_check CHECK (status IN ('pending', 'succeeded', 'failed', 'canceled', 'expired')),
        ADD CONSTRAINT top_ups_check CHECK ((status = 'succeeded') = (paid_at IS NOT NULL)),
        DROP COLUMN refunded_amount;
    `);
  }
}
