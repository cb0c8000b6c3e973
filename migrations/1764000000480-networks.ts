import { MigrationInterface, QueryRunner } from 'typeorm';
import { editOperationTypes } from './support/operation-types';

/** The operation types this migration adds to operations_type_check (whatever other migrations added stays). */
const TYPES = ['vm.attach_network', 'vm.detach_network'];

/**
 * IPv6 on every server, and private networks between servers (docs/reference/networks.md).
 *
 * IPv6:
 * - `regions.ipv6_prefix`: the region's /48 (a cidr, unique among regions). Regions that exist
 *   get one from 2001:db8::/32 (2001:db8:1::/48, 2001:db8:2::/48, … skipping prefixes taken), as
 *   regions created later without one do (its column default). `ipv6_subnets_used` counts the /64s
 *   handed out in the region (a CHECK at 65535, the /48's last /64).
 * - `servers.ipv6`: the first host address (`::1`) of the server's own /64, the next /64 of its
 *   region's prefix (never reused, as IPv4 addresses are not: an instance being deleted still has
 *   its address at the provider). Set by a trigger on every server inserted live (bought or
 *   seeded), under the region row's lock (the same row the vCPU counter locks); removed when the
 *   server is marked deleted, as its ipv4 is. Unique among live servers (a partial unique index).
 *   Live servers that exist now get one here, in region, creation and id order.
 * - The simulated compute provider routes each server's /64 (`provider_server_ipv6`, one address
 *   per server, unique); the live instances that exist now (seeded ones, and bought ones) are
 *   adopted with their server's address, and seeded servers inserted later too (a trigger), as
 *   provider_instances adopts seeded servers.
 *
 * Private networks:
 * - `networks`: an organization's private IPv4 network in one region: a name unique among the
 *   organization's networks, an RFC 1918 range of prefix /16 to /24, labels. Ranges of one
 *   organization in one region do not overlap: creating one locks the organization's row first,
 *   so two racing creates are judged one after the other (the second sees the first).
 * - `server_networks`: a server's attachment to a network with its private address; `status`
 *   `attaching` (from acceptance of vm.attach_network until its step commits), `attached`,
 *   `detaching` (vm.detach_network accepted). An address is held once per network whatever the
 *   status (the unique (network_id, ip) decides two servers asking for the same address: the
 *   second is refused at acceptance); a server is in a network once (primary key). When a server
 *   is marked deleted its attachments go (a trigger), whoever writes it.
 * - The simulated provider keeps its attachments in `provider_network_attachments` (an address
 *   once per network) and the calls that took effect in `provider_network_calls` (idempotency by
 *   server and step, as provider_compute_calls). Deleting an instance drops its attachments there.
 * - operations_type_check gains vm.attach_network and vm.detach_network, edited from its current definition.
 */
export class Networks1764000000480 implements MigrationInterface {
  name = 'Networks1764000000480';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE SEQUENCE region_ipv6_prefix_seq START 1;
      CREATE FUNCTION next_region_ipv6_prefix() RETURNS cidr LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE candidate cidr;
      BEGIN
        LOOP
          candidate := ('2001:db8:' || to_hex(nextval('region_ipv6_prefix_seq')) || '::/48')::cidr;
          IF NOT EXISTS (SELECT 1 FROM regions WHERE ipv6_prefix = candidate) THEN
            RETURN candidate;
          END IF;
        END LOOP;
      END
      $fn$;

      ALTER TABLE regions
        ADD COLUMN ipv6_prefix cidr,
        ADD COLUMN ipv6_subnets_used integer NOT NULL DEFAULT 0 CHECK (ipv6_subnets_used BETWEEN 0 AND 65535);
      UPDATE regions r SET ipv6_prefix = p.prefix
        FROM (SELECT id, next_region_ipv6_prefix() AS prefix FROM (SELECT id FROM regions ORDER BY id COLLATE "C") o) p
       WHERE p.id = r.id;
      ALTER TABLE regions
        ALTER COLUMN ipv6_prefix SET DEFAULT next_region_ipv6_prefix(),
        ALTER COLUMN ipv6_prefix SET NOT NULL,
        ADD CONSTRAINT regions_ipv6_prefix_48 CHECK (family(ipv6_prefix) = 6 AND masklen(ipv6_prefix) = 48);
      CREATE UNIQUE INDEX regions_ipv6_prefix_key ON regions (ipv6_prefix);

      -- The next /64 of the region's /48: its first host address (::1), compressed.
      CREATE FUNCTION next_server_ipv6(region text) RETURNS text LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE prefix cidr; n integer; head text[];
      BEGIN
        UPDATE regions SET ipv6_subnets_used = ipv6_subnets_used + 1 WHERE id = region RETURNING ipv6_prefix, ipv6_subnets_used INTO prefix, n;
        IF prefix IS NULL THEN
          RETURN NULL;
        END IF;
        -- A /48's network address prints as "a:b:c::" (its last 80 bits are zero): its first three groups.
        head := string_to_array(NULLIF(split_part(host(prefix), '::', 1), ''), ':');
        WHILE coalesce(array_length(head, 1), 0) < 3 LOOP
          head := head || '0'::text;
        END LOOP;
        RETURN host((head[1] || ':' || head[2] || ':' || head[3] || ':' || to_hex(n) || '::1')::inet);
      END
      $fn$;

      ALTER TABLE servers ADD COLUMN ipv6 text;
      UPDATE servers s SET ipv6 = next_server_ipv6(o.region_id)
        FROM (SELECT id, region_id FROM servers WHERE deleted_at IS NULL ORDER BY region_id COLLATE "C", created_at, id COLLATE "C") o
       WHERE o.id = s.id;
      CREATE UNIQUE INDEX servers_ipv6_live_key ON servers (ipv6) WHERE deleted_at IS NULL AND ipv6 IS NOT NULL;

      CREATE FUNCTION servers_assign_ipv6() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        NEW.ipv6 := next_server_ipv6(NEW.region_id);
        RETURN NEW;
      END
      $fn$;
      CREATE TRIGGER servers_assign_ipv6 BEFORE INSERT ON servers
        FOR EACH ROW WHEN (NEW.ipv6 IS NULL AND NEW.deleted_at IS NULL)
        EXECUTE FUNCTION servers_assign_ipv6();

      CREATE FUNCTION servers_release_addresses() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        NEW.ipv6 := NULL;
        DELETE FROM server_networks WHERE server_id = NEW.id;
        RETURN NEW;
      END
      $fn$;

      CREATE TABLE provider_server_ipv6 (
        server_id  text PRIMARY KEY,
        ipv6       text NOT NULL UNIQUE,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      INSERT INTO provider_server_ipv6 (server_id, ipv6)
      SELECT s.id, s.ipv6 FROM servers s
       WHERE s.deleted_at IS NULL AND s.ipv6 IS NOT NULL
         AND EXISTS (SELECT 1 FROM provider_instances p WHERE p.server_id = s.id AND p.deleted_at IS NULL);
      CREATE FUNCTION provider_ipv6_adopt_seeded() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        INSERT INTO provider_server_ipv6 (server_id, ipv6) VALUES (NEW.id, NEW.ipv6) ON CONFLICT DO NOTHING;
        RETURN NULL;
      END
      $fn$;
      CREATE TRIGGER provider_ipv6_adopt_seeded AFTER INSERT ON servers
        FOR EACH ROW WHEN (NEW.plan_id IS NULL AND NEW.deleted_at IS NULL AND NEW.ipv4 IS NOT NULL AND NEW.ipv6 IS NOT NULL)
        EXECUTE FUNCTION provider_ipv6_adopt_seeded();

      CREATE TABLE networks (
        id          text PRIMARY KEY CHECK (id LIKE 'net\\_%'),
        org_id      text NOT NULL REFERENCES organizations(id),
        name        text NOT NULL CHECK (name ~ '^[A-Za-z0-9]([A-Za-z0-9._-]{0,62}[A-Za-z0-9])?$'),
        region_id   text NOT NULL REFERENCES regions(id),
        ip_range    cidr NOT NULL CHECK (
          family(ip_range) = 4 AND masklen(ip_range) BETWEEN 16 AND 24
          AND (ip_range <<= '10.0.0.0/8'::cidr OR ip_range <<= '172.16.0.0/12'::cidr OR ip_range <<= '192.168.0.0/16'::cidr)),
        labels      jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (volume_labels_valid(labels)),
        created_at  timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX networks_org_name_key ON networks (org_id, name);
      CREATE INDEX networks_org_created_idx ON networks (org_id, created_at DESC, id DESC);
      CREATE INDEX networks_org_region_idx ON networks (org_id, region_id);

      CREATE TABLE server_networks (
        server_id   text NOT NULL REFERENCES servers(id),
        network_id  text NOT NULL REFERENCES networks(id),
        ip          inet NOT NULL CHECK (family(ip) = 4 AND masklen(ip) = 32),
        status      text NOT NULL CHECK (status IN ('attaching', 'attached', 'detaching')),
        created_at  timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (server_id, network_id)
      );
      CREATE UNIQUE INDEX server_networks_network_ip_key ON server_networks (network_id, ip);
      CREATE INDEX server_networks_network_idx ON server_networks (network_id, server_id);

      CREATE TRIGGER servers_release_addresses BEFORE UPDATE OF deleted_at ON servers
        FOR EACH ROW WHEN (OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL)
        EXECUTE FUNCTION servers_release_addresses();

      CREATE TABLE provider_network_attachments (
        server_id   text NOT NULL,
        network_id  text NOT NULL,
        ip_range    text NOT NULL,
        ip          text NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (server_id, network_id)
      );
      CREATE UNIQUE INDEX provider_network_attachments_ip_key ON provider_network_attachments (network_id, ip);

      CREATE TABLE provider_network_calls (
        server_id   text NOT NULL,
        step        text NOT NULL,
        action      text NOT NULL CHECK (action IN ('assign_ipv6', 'attach_network', 'detach_network')),
        answer      jsonb,
        created_at  timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (server_id, step)
      );

      ${editOperationTypes('add', TYPES)}
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ${editOperationTypes('remove', TYPES)}
      DROP TABLE provider_network_calls, provider_network_attachments;
      DROP TRIGGER servers_release_addresses ON servers;
      DROP TABLE server_networks, networks;
      DROP TRIGGER provider_ipv6_adopt_seeded ON servers;
      DROP FUNCTION provider_ipv6_adopt_seeded();
      DROP TABLE provider_server_ipv6;
      DROP FUNCTION servers_release_addresses();
      DROP TRIGGER servers_assign_ipv6 ON servers;
      DROP FUNCTION servers_assign_ipv6();
      DROP INDEX servers_ipv6_live_key;
      ALTER TABLE servers DROP COLUMN ipv6;
      DROP FUNCTION next_server_ipv6(text);
      DROP INDEX regions_ipv6_prefix_key;
      ALTER TABLE regions DROP CONSTRAINT regions_ipv6_prefix_48, DROP COLUMN ipv6_prefix, DROP COLUMN ipv6_subnets_used;
      DROP FUNCTION next_region_ipv6_prefix();
      DROP SEQUENCE region_ipv6_prefix_seq;
    `);
  }
}
