import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Wallet top-ups through a hosted checkout:
 * - top_ups: one per checkout session; `succeeded` has `paid_at`, `failed` a `failure_reason`.
 *   The credit itself is the ledger row naming the top-up (wallet_ledger_one_top_up_credit: once).
 * - payment_events: every provider event applied, by (provider, event id): a delivery seen
 *   again is a duplicate and changes nothing.
 * - sim_checkout_sessions, sim_payment_events: the simulated provider's own records (its
 *   sessions, and the events it signs and delivers, with their delivery schedule).
 */
export class TopUps1764000000241 implements MigrationInterface {
  name = 'TopUps1764000000241';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE top_ups (
        id             text PRIMARY KEY,
        org_id         text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        status         text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed', 'canceled', 'expired')),
        currency       text NOT NULL CHECK (currency IN ('USD', 'IDR')),
        amount         numeric(38,0) NOT NULL CHECK (amount > 0),
        provider       text NOT NULL,
        session_id     text NOT NULL,
        checkout_url   text NOT NULL,
        return_url     text,
        created_at     timestamptz NOT NULL DEFAULT now(),
        expires_at     timestamptz NOT NULL,
        updated_at     timestamptz NOT NULL DEFAULT now(),
        paid_at        timestamptz,
        failure_reason text,
        CHECK ((status = 'succeeded') = (paid_at IS NOT NULL)),
        CHECK ((status = 'failed') = (failure_reason IS NOT NULL))
      );
      CREATE UNIQUE INDEX top_ups_session ON top_ups (provider, session_id);
      CREATE INDEX top_ups_org_created ON top_ups (org_id, created_at DESC, id DESC);
      CREATE INDEX top_ups_org_pending ON top_ups (org_id) WHERE status = 'pending';
      CREATE INDEX top_ups_pending_expiry ON top_ups (expires_at) WHERE status = 'pending';

      CREATE TABLE payment_events (
        provider    text NOT NULL,
        event_id    text NOT NULL,
        type        text NOT NULL,
        top_up_id   text,
        outcome     text NOT NULL CHECK (outcome IN ('applied', 'no_change', 'ignored', 'unmatched')),
        received_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (provider, event_id)
      );

      CREATE TABLE sim_checkout_sessions (
        id         text PRIMARY KEY,
        top_up_id  text NOT NULL UNIQUE,
        currency   text NOT NULL,
        amount     numeric(38,0) NOT NULL,
        return_url text,
        status     text NOT NULL CHECK (status IN ('open', 'paid', 'canceled', 'expired')),
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );

      CREATE TABLE sim_payment_events (
        id              text PRIMARY KEY,
        session_id      text NOT NULL REFERENCES sim_checkout_sessions(id) ON DELETE CASCADE,
        type            text NOT NULL,
        body            text NOT NULL,
        created_at      timestamptz NOT NULL DEFAULT now(),
        attempts        integer NOT NULL DEFAULT 0,
        delivered_at    timestamptz,
        dropped_at      timestamptz,
        next_attempt_at timestamptz
      );
      CREATE INDEX sim_payment_events_due ON sim_payment_events (next_attempt_at) WHERE delivered_at IS NULL AND dropped_at IS NULL;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE sim_payment_events, sim_checkout_sessions, payment_events, top_ups;`);
  }
}
