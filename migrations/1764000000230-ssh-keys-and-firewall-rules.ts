import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * SSH keys and firewall rules (servers.md "SSH keys and firewall rules"):
 * - ssh_keys: one fingerprint and one name per organization (unique indexes: two racing creates
 *   cannot both land); `public_key` the line as stored (trimmed, single spaces).
 * - firewall_rules: the canonical form; `rule_digest` (SHA-256 of the canonical rule, description
 *   aside) is unique per organization, so one canonical rule exists once whatever the races.
 *   A rule naming a server lives and dies with it (the Servers module deletes it, audited).
 * The 100-per-organization limits are counted under the organization row's lock.
 */
export class SshKeysAndFirewallRules1764000000230 implements MigrationInterface {
  name = 'SshKeysAndFirewallRules1764000000230';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE ssh_keys (
        id           text PRIMARY KEY,
        org_id       text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        name         text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 64),
        public_key   text NOT NULL CHECK (char_length(public_key) <= 16384),
        key_type     text NOT NULL CHECK (key_type IN ('ssh-ed25519', 'ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521', 'ssh-rsa')),
        fingerprint  text NOT NULL,
        created_at   timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX ssh_keys_org_fingerprint_key ON ssh_keys (org_id, fingerprint);
      CREATE UNIQUE INDEX ssh_keys_org_name_key ON ssh_keys (org_id, name);
      CREATE INDEX ssh_keys_org_created_idx ON ssh_keys (org_id, created_at DESC, id DESC);

      CREATE TABLE firewall_rules (
        id            text PRIMARY KEY,
        org_id        text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        server_id     text REFERENCES servers(id) ON DELETE CASCADE,
        direction     text NOT NULL CHECK (direction IN ('in', 'out')),
        protocol      text NOT NULL CHECK (protocol IN ('tcp', 'udp', 'icmp')),
        port          text CHECK ((protocol = 'icmp') = (port IS NULL)),
        sources       text[] NOT NULL,
        destinations  text[] NOT NULL,
        description   text CHECK (char_length(description) <= 255),
        rule_digest   text NOT NULL,
        created_at    timestamptz NOT NULL DEFAULT now(),
        CHECK (CASE direction WHEN 'in' THEN cardinality(sources) BETWEEN 1 AND 100 AND cardinality(destinations) = 0
                              ELSE cardinality(destinations) BETWEEN 1 AND 100 AND cardinality(sources) = 0 END)
      );
      CREATE UNIQUE INDEX firewall_rules_org_digest_key ON firewall_rules (org_id, rule_digest);
      CREATE INDEX firewall_rules_org_created_idx ON firewall_rules (org_id, created_at, id);
      CREATE INDEX firewall_rules_server_idx ON firewall_rules (server_id, created_at, id) WHERE server_id IS NOT NULL;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE firewall_rules; DROP TABLE ssh_keys;');
  }
}
