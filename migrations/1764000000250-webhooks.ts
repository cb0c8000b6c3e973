import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Event webhooks: endpoints (their secrets sealed), the outbox of events, one delivery per
 * event and endpoint. Deliveries and events go with their endpoint (and organization).
 */
export class Webhooks1764000000250 implements MigrationInterface {
  name = 'Webhooks1764000000250';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhook_endpoints (
        id text PRIMARY KEY,
        org_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        url text NOT NULL CHECK (char_length(url) <= 2048),
        events text[] NOT NULL CHECK (cardinality(events) > 0),
        description text CHECK (char_length(description) BETWEEN 1 AND 256),
        status text NOT NULL CHECK (status IN ('enabled', 'disabled')),
        disabled_reason text CHECK (disabled_reason IN ('manual', 'gone', 'failing')),
        failing_since timestamptz,
        secret_sealed text NOT NULL,
        previous_secret_sealed text,
        secret_rotation_ends_at timestamptz,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        CHECK ((status = 'enabled') = (disabled_reason IS NULL))
      );
      CREATE INDEX webhook_endpoints_org_idx ON webhook_endpoints (org_id, created_at DESC, id DESC);
      CREATE INDEX webhook_endpoints_enabled_idx ON webhook_endpoints (org_id) WHERE status = 'enabled';

      CREATE TABLE webhook_events (
        id text PRIMARY KEY,
        org_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        type text NOT NULL,
        created_at timestamptz NOT NULL,
        body text NOT NULL
      );
      CREATE INDEX webhook_events_created_idx ON webhook_events (created_at);

      CREATE TABLE webhook_deliveries (
        id text PRIMARY KEY,
        endpoint_id text NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
        event_id text NOT NULL REFERENCES webhook_events(id) ON DELETE CASCADE,
        event_type text NOT NULL,
        status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
        attempts int NOT NULL DEFAULT 0 CHECK (attempts >= 0),
        created_at timestamptz NOT NULL,
        last_attempt_at timestamptz,
        last_response_status int,
        last_error text CHECK (last_error IN ('http_status', 'timeout', 'connection_error', 'tls_error', 'dns_error', 'blocked_address', 'endpoint_disabled')),
        next_attempt_at timestamptz,
        redelivery_of text,
        locked_by text,
        locked_until timestamptz,
        CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL))
      );
      CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
      CREATE INDEX webhook_deliveries_pending_endpoint_idx ON webhook_deliveries (endpoint_id) WHERE status = 'pending';
      CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, created_at DESC, id DESC);
      CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE webhook_deliveries; DROP TABLE webhook_events; DROP TABLE webhook_endpoints;`);
  }
}
