import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The whole schema of interface.md and decisions.md. Money is NUMERIC(38,0) in integer minor
 * units (USD 1e-5, IDR 1). Every invariant that guards money is a constraint here, so it holds
 * across any number of server processes. PostgreSQL 15 features only (the embedded engine is 18).
 */
export class InitialSchema1763769600000 implements MigrationInterface {
  name = 'InitialSchema1763769600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE organizations (
        id          text PRIMARY KEY,
        name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        created_at  timestamptz NOT NULL DEFAULT now()
      );

      CREATE TABLE users (
        id             text PRIMARY KEY,
        email          text NOT NULL CHECK (email = lower(email) AND length(email) BETWEEN 3 AND 254),
        password_hash  text NOT NULL,
        created_at     timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT users_email_key UNIQUE (email)
      );

      CREATE TABLE memberships (
        org_id      text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        user_id     text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        role        text NOT NULL CHECK (role IN ('owner', 'admin', 'developer', 'viewer')),
        created_at  timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (org_id, user_id)
      );
      CREATE INDEX memberships_user_idx ON memberships (user_id, created_at, org_id);

      CREATE TABLE api_keys (
        id           text PRIMARY KEY,
        org_id       text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        name         text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
        scopes       text[] NOT NULL CHECK (scopes <@ ARRAY['vm:read', 'vm:write']::text[] AND cardinality(scopes) > 0),
        token_hash   bytea NOT NULL,
        created_by   text REFERENCES users(id) ON DELETE SET NULL,
        created_at   timestamptz NOT NULL DEFAULT now(),
        revoked_at   timestamptz,
        CONSTRAINT api_keys_token_hash_key UNIQUE (token_hash)
      );
      CREATE INDEX api_keys_org_idx ON api_keys (org_id) WHERE revoked_at IS NULL;

      CREATE TABLE sessions (
        id          text PRIMARY KEY,
        user_id     text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        token_hash  bytea NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now(),
        expires_at  timestamptz NOT NULL,
        revoked_at  timestamptz,
        CONSTRAINT sessions_token_hash_key UNIQUE (token_hash)
      );

      CREATE TABLE regions (
        id           text PRIMARY KEY,
        name         text NOT NULL,
        capacity_gb  bigint NOT NULL CHECK (capacity_gb >= 0),
        created_at   timestamptz NOT NULL DEFAULT now()
      );

      CREATE TABLE zones (
        id         text PRIMARY KEY,
        region_id  text NOT NULL REFERENCES regions(id) ON DELETE CASCADE,
        available  boolean NOT NULL,
        CONSTRAINT zones_region_id_id_key UNIQUE (region_id, id)
      );

      CREATE TABLE volume_offers (
        region_id          text NOT NULL REFERENCES regions(id) ON DELETE CASCADE,
        type               text NOT NULL CHECK (type IN ('premium', 'ssd')),
        min_gb             integer NOT NULL CHECK (min_gb > 0),
        max_gb             integer NOT NULL,
        step_gb            integer NOT NULL CHECK (step_gb > 0),
        terms              integer[] NOT NULL CHECK (cardinality(terms) > 0 AND terms <@ ARRAY[1, 3, 12]),
        per_server_limit   integer NOT NULL CHECK (per_server_limit >= 0),
        price_usd_minor    numeric(38,0) NOT NULL CHECK (price_usd_minor >= 0),
        price_idr_minor    numeric(38,0) NOT NULL CHECK (price_idr_minor >= 0),
        PRIMARY KEY (region_id, type),
        CHECK (max_gb >= min_gb)
      );

      CREATE TABLE servers (
        id          text PRIMARY KEY,
        org_id      text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        name        text NOT NULL,
        region_id   text NOT NULL,
        zone_id     text NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now(),
        deleted_at  timestamptz,
        FOREIGN KEY (region_id, zone_id) REFERENCES zones (region_id, id)
      );
      CREATE INDEX servers_org_zone_idx ON servers (org_id, zone_id, name, id) WHERE deleted_at IS NULL;

      CREATE TABLE volumes (
        id               text PRIMARY KEY,
        org_id           text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        name             text NOT NULL,
        status           text NOT NULL CHECK (status IN ('creating', 'available', 'attached', 'deleting', 'deleted')),
        type             text NOT NULL CHECK (type IN ('premium', 'ssd')),
        region_id        text NOT NULL,
        zone_id          text NOT NULL,
        size_gb          integer NOT NULL CHECK (size_gb > 0),
        server_id        text REFERENCES servers(id),
        mount_path       text,
        mounted          boolean NOT NULL DEFAULT false,
        term_months      integer NOT NULL CHECK (term_months IN (1, 3, 12)),
        billing_currency text NOT NULL CHECK (billing_currency IN ('USD', 'IDR')),
        billing_amount   numeric(38,0) NOT NULL CHECK (billing_amount >= 0),
        price_usd_minor  numeric(38,0) NOT NULL CHECK (price_usd_minor >= 0),
        price_idr_minor  numeric(38,0) NOT NULL CHECK (price_idr_minor >= 0),
        expires_at       timestamptz NOT NULL,
        note             text,
        created_at       timestamptz NOT NULL DEFAULT now(),
        deleted_at       timestamptz,
        FOREIGN KEY (region_id, zone_id) REFERENCES zones (region_id, id),
        CHECK ((status = 'attached') = (server_id IS NOT NULL)),
        CHECK (server_id IS NOT NULL OR (mount_path IS NULL AND mounted = false)),
        CHECK ((status = 'deleted') = (deleted_at IS NOT NULL))
      );
      CREATE INDEX volumes_org_created_idx ON volumes (org_id, created_at DESC, id DESC);
      CREATE INDEX volumes_region_live_idx ON volumes (region_id) WHERE deleted_at IS NULL;
      CREATE INDEX volumes_server_live_idx ON volumes (server_id) WHERE deleted_at IS NULL;

      CREATE TABLE wallet_balances (
        org_id     text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        currency   text NOT NULL CHECK (currency IN ('USD', 'IDR')),
        available  numeric(38,0) NOT NULL DEFAULT 0,
        reserved   numeric(38,0) NOT NULL DEFAULT 0,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (org_id, currency),
        CONSTRAINT wallet_available_not_negative CHECK (available >= 0),
        CONSTRAINT wallet_reserved_not_negative CHECK (reserved >= 0)
      );

      CREATE TABLE operations (
        id             text PRIMARY KEY,
        org_id         text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        type           text NOT NULL CHECK (type IN ('vm.create', 'vm.renew', 'vm.delete', 'vm.start', 'vm.stop',
                         'vm.reboot', 'volume.create', 'volume.attach', 'volume.detach', 'volume.renew',
                         'volume.delete', 'template.deploy', 'template.update', 'template.health', 'template.remove')),
        status         text NOT NULL CHECK (status IN ('pending', 'running', 'succeeded', 'failed')),
        vm_id          text,
        volume_id      text REFERENCES volumes(id),
        deployment_id  text,
        steps          jsonb NOT NULL DEFAULT '[]'::jsonb,
        params         jsonb NOT NULL DEFAULT '{}'::jsonb,
        result         jsonb,
        error          jsonb,
        attempts       integer NOT NULL DEFAULT 0,
        locked_by      text,
        locked_until   timestamptz,
        created_at     timestamptz NOT NULL DEFAULT now(),
        started_at     timestamptz,
        finished_at    timestamptz,
        CHECK ((status IN ('succeeded', 'failed')) = (finished_at IS NOT NULL)),
        CHECK ((status = 'failed') = (error IS NOT NULL))
      );
      CREATE INDEX operations_org_created_idx ON operations (org_id, created_at DESC, id DESC);
      CREATE INDEX operations_claim_idx ON operations (created_at) WHERE status IN ('pending', 'running');
      -- At most one unfinished operation per volume, whatever the number of server processes.
      CREATE UNIQUE INDEX operations_one_active_per_volume ON operations (volume_id)
        WHERE status IN ('pending', 'running') AND volume_id IS NOT NULL;

      CREATE TABLE wallet_ledger (
        id            bigserial PRIMARY KEY,
        org_id        text NOT NULL,
        currency      text NOT NULL CHECK (currency IN ('USD', 'IDR')),
        kind          text NOT NULL CHECK (kind IN ('credit', 'hold', 'capture', 'release')),
        amount        numeric(38,0) NOT NULL CHECK (amount > 0),
        operation_id  text REFERENCES operations(id),
        memo          text,
        created_at    timestamptz NOT NULL DEFAULT now(),
        FOREIGN KEY (org_id, currency) REFERENCES wallet_balances (org_id, currency),
        CHECK ((kind = 'credit') = (operation_id IS NULL))
      );
      -- One hold per operation, and it ends once: captured or released, never both, never twice.
      CREATE UNIQUE INDEX wallet_ledger_one_hold ON wallet_ledger (operation_id) WHERE kind = 'hold';
      CREATE UNIQUE INDEX wallet_ledger_one_settlement ON wallet_ledger (operation_id) WHERE kind IN ('capture', 'release');
      CREATE INDEX wallet_ledger_org_idx ON wallet_ledger (org_id, currency, id);

      -- The ledger is append-only.
      CREATE FUNCTION wallet_ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        RAISE EXCEPTION 'wallet_ledger is append-only' USING ERRCODE = 'restrict_violation';
      END
      $fn$;
      CREATE TRIGGER wallet_ledger_no_update BEFORE UPDATE OR DELETE ON wallet_ledger
        FOR EACH ROW EXECUTE FUNCTION wallet_ledger_append_only();

      CREATE TABLE idempotency_records (
        org_id          text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        key             text NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
        fingerprint     text NOT NULL,
        status_code     integer,
        response_body   text,
        response_headers jsonb NOT NULL DEFAULT '{}'::jsonb,
        created_at      timestamptz NOT NULL DEFAULT now(),
        expires_at      timestamptz NOT NULL,
        PRIMARY KEY (org_id, key)
      );
      CREATE INDEX idempotency_records_expires_idx ON idempotency_records (expires_at);

      CREATE TABLE audit_log (
        id           bigserial PRIMARY KEY,
        org_id       text REFERENCES organizations(id) ON DELETE CASCADE,
        actor_type   text NOT NULL CHECK (actor_type IN ('user', 'api_key', 'operator', 'anonymous')),
        actor_id     text,
        action       text NOT NULL,
        target_id    text,
        ip_address   text,
        data         jsonb NOT NULL DEFAULT '{}'::jsonb,
        created_at   timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX audit_log_org_idx ON audit_log (org_id, created_at DESC, id DESC);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TABLE IF EXISTS audit_log, idempotency_records, wallet_ledger, operations, wallet_balances,
        volumes, servers, volume_offers, zones, regions, sessions, api_keys, memberships, users, organizations CASCADE;
      DROP FUNCTION IF EXISTS wallet_ledger_append_only();
    `);
  }
}
