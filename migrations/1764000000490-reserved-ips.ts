import { MigrationInterface, QueryRunner } from 'typeorm';
import { editOperationTypes } from './support/operation-types';

/** The operation types this migration adds to operations_type_check (whatever other migrations added stays). */
const TYPES = ['ip.reserve', 'ip.assign', 'ip.unassign', 'ip.renew', 'ip.release'];

/**
 * Reserved IPv4 addresses, prepaid like snapshots (the region's `reserved_ipv4_price_*_minor` a
 * month, times `term_months`), kept after the servers they are assigned to:
 *
 * - `regions` gain the offer: the monthly price (both currencies or neither: none, the region
 *   sells no reserved addresses).
 * - `reserved_ip_pool`: every address a region hands out, one row each (an address belongs to one
 *   region). `reserved_ip_id` names the live reservation holding it; `available_after` is the end
 *   of a released address's cooldown (IP_COOLDOWN_S). A reservation takes a free row FOR UPDATE
 *   SKIP LOCKED in its accepting transaction: the capacity guard is the rows themselves, so
 *   concurrent reservations of one region never take one address twice nor more than the pool.
 * - `reserved_ips`: the reservations. `server_id` is the server the address is assigned to (as the
 *   database knows it), `pending_server_id` the one an unfinished ip.reserve or ip.assign moves it
 *   to. Unique indexes: an address is held by at most one live (not released) reservation; a
 *   server has at most one reserved address, and is the target of at most one assignment.
 * - A server that is deleted keeps no reserved address: a trigger on the server's deletion
 *   leaves its reservation `available` (the address kept, its term running).
 * - The simulated compute provider keeps its address assignments in `provider_addresses`, and
 *   its calls (idempotent by address and step) in `provider_address_calls`.
 * - operations_type_check gains the ip.* operations, edited from its current definition.
 */
export class ReservedIps1764000000490 implements MigrationInterface {
  name = 'ReservedIps1764000000490';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE regions
        ADD COLUMN reserved_ipv4_price_usd_minor numeric CHECK (reserved_ipv4_price_usd_minor >= 0),
        ADD COLUMN reserved_ipv4_price_idr_minor numeric CHECK (reserved_ipv4_price_idr_minor >= 0),
        ADD CONSTRAINT regions_reserved_ipv4_price_both CHECK ((reserved_ipv4_price_usd_minor IS NULL) = (reserved_ipv4_price_idr_minor IS NULL));

      CREATE TABLE reserved_ip_pool (
        ip              inet PRIMARY KEY CHECK (family(ip) = 4 AND masklen(ip) = 32),
        region_id       text NOT NULL REFERENCES regions(id),
        reserved_ip_id  text,
        available_after timestamptz NOT NULL DEFAULT '-infinity'
      );
      CREATE UNIQUE INDEX reserved_ip_pool_holder ON reserved_ip_pool (reserved_ip_id) WHERE reserved_ip_id IS NOT NULL;
      CREATE INDEX reserved_ip_pool_free_idx ON reserved_ip_pool (region_id, available_after, ip) WHERE reserved_ip_id IS NULL;

      CREATE TABLE reserved_ips (
        id                     text PRIMARY KEY CHECK (id LIKE 'rip\\_%'),
        org_id                 text NOT NULL REFERENCES organizations(id),
        ip                     inet NOT NULL REFERENCES reserved_ip_pool(ip),
        region_id              text NOT NULL REFERENCES regions(id),
        status                 text NOT NULL CHECK (status IN ('allocating', 'available', 'assigned', 'suspended', 'released')),
        server_id              text REFERENCES servers(id),
        pending_server_id      text REFERENCES servers(id),
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
        suspended_at           timestamptz,
        release_at             timestamptz,
        released_at            timestamptz,
        released_reason        text CHECK (released_reason IN ('customer', 'expired', 'purchase_failed')),
        CONSTRAINT reserved_ips_released_at CHECK ((status = 'released') = (released_at IS NOT NULL)),
        CONSTRAINT reserved_ips_assigned CHECK ((status = 'assigned') = (server_id IS NOT NULL)),
        CONSTRAINT reserved_ips_suspended_times CHECK ((status <> 'suspended' OR suspended_at IS NOT NULL) AND (suspended_at IS NULL) = (release_at IS NULL))
      );
      CREATE UNIQUE INDEX reserved_ips_live_ip ON reserved_ips (ip) WHERE status <> 'released';
      CREATE UNIQUE INDEX reserved_ips_one_per_server ON reserved_ips (server_id) WHERE server_id IS NOT NULL;
      CREATE UNIQUE INDEX reserved_ips_one_pending_per_server ON reserved_ips (pending_server_id) WHERE pending_server_id IS NOT NULL;
      CREATE INDEX reserved_ips_org_created_idx ON reserved_ips (org_id, created_at DESC, id DESC);
      CREATE INDEX reserved_ips_expiry_due_idx ON reserved_ips (expires_at) WHERE status IN ('available', 'assigned');
      CREATE INDEX reserved_ips_release_due_idx ON reserved_ips (release_at) WHERE status = 'suspended';

      -- A deleted server keeps no reserved address: its reservation stays, available.
      CREATE FUNCTION servers_deleted_free_reserved_ip() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        UPDATE reserved_ips SET server_id = NULL, status = CASE WHEN status = 'assigned' THEN 'available' ELSE status END
         WHERE server_id = NEW.id;
        UPDATE reserved_ips SET pending_server_id = NULL WHERE pending_server_id = NEW.id;
        RETURN NULL;
      END $fn$;
      CREATE TRIGGER servers_deleted_free_reserved_ip AFTER UPDATE OF deleted_at ON servers
        FOR EACH ROW WHEN (OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL)
        EXECUTE FUNCTION servers_deleted_free_reserved_ip();

      CREATE TABLE provider_addresses (
        address_id text PRIMARY KEY,
        ip         inet NOT NULL,
        server_id  text,
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX provider_addresses_server_idx ON provider_addresses (server_id) WHERE server_id IS NOT NULL;
      CREATE TABLE provider_address_calls (
        address_id text NOT NULL,
        step       text NOT NULL,
        answer     jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (address_id, step)
      );
    `);
    await q.query(`
      ${editOperationTypes('add', TYPES)}
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ${editOperationTypes('remove', TYPES)}
      DROP TABLE provider_address_calls, provider_addresses;
      DROP TRIGGER servers_deleted_free_reserved_ip ON servers;
      DROP FUNCTION servers_deleted_free_reserved_ip();
      DROP TABLE reserved_ips, reserved_ip_pool;
      ALTER TABLE regions DROP CONSTRAINT regions_reserved_ipv4_price_both,
        DROP COLUMN reserved_ipv4_price_usd_minor, DROP COLUMN reserved_ipv4_price_idr_minor;
    `);
  }
}
