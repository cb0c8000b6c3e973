import { Db } from '../../../shared/database/transaction';
import { canonicalRule, ruleDigest } from '../../access/domain/firewall-rule';
import { MAX_FIREWALL_RULES_PER_ORG, MAX_SSH_KEYS_PER_ORG } from '../../access/domain/ssh-key';
import { parsePublicKey } from '../../access/domain/ssh-public-key';
import { Finding, InvariantCheck } from '../application/invariant-checks.port';

interface RuleRow {
  id: string;
  org_id: string;
  server_id: string | null;
  direction: string;
  protocol: string;
  port: string | null;
  sources: string[];
  destinations: string[];
  rule_digest: string;
  server_deleted: boolean | null;
}

/**
 * servers.md "SSH keys and firewall rules": at most 100 SSH keys and 100 firewall rules per
 * organization; every stored rule is in canonical form with the digest of that form (so the
 * unique index compares canonical rules), and names no deleted server (its own rules go with
 * it); every stored key parses, with the fingerprint of its blob.
 */
export class AccessCheck implements InvariantCheck {
  readonly name = 'access.keys_and_rules_canonical_within_limits';
  readonly description =
    'At most 100 SSH keys and 100 firewall rules per organization; each rule stored in canonical form with its digest and no rule on a deleted server; each key parses to its stored fingerprint';

  constructor(private readonly db: Db) {}

  async findViolations(): Promise<Finding[]> {
    const found: Finding[] = [];
    const counts = await this.db.query<{ org_id: string; keys: number; rules: number }>(
      `SELECT o.id AS org_id,
              (SELECT count(*)::int FROM ssh_keys k WHERE k.org_id = o.id) AS keys,
              (SELECT count(*)::int FROM firewall_rules r WHERE r.org_id = o.id) AS rules
         FROM organizations o ORDER BY o.id`,
    );
    for (const c of counts) {
      if (c.keys > MAX_SSH_KEYS_PER_ORG) found.push({ subject: c.org_id, message: `holds ${c.keys} SSH keys, over the limit`, details: { keys: c.keys, limit: MAX_SSH_KEYS_PER_ORG } });
      if (c.rules > MAX_FIREWALL_RULES_PER_ORG) found.push({ subject: c.org_id, message: `holds ${c.rules} firewall rules, over the limit`, details: { rules: c.rules, limit: MAX_FIREWALL_RULES_PER_ORG } });
    }
    const rules = await this.db.query<RuleRow>(
      `SELECT r.id, r.org_id, r.server_id, r.direction, r.protocol, r.port, r.sources, r.destinations, r.rule_digest,
              s.deleted_at IS NOT NULL AS server_deleted
         FROM firewall_rules r LEFT JOIN servers s ON s.id = r.server_id ORDER BY r.id`,
    );
    for (const r of rules) {
      if (r.server_deleted) found.push({ subject: r.id, message: `firewall rule of the deleted server ${r.server_id} was not deleted with it`, details: { org_id: r.org_id, server_id: r.server_id } });
      let canonical;
      try {
        canonical = canonicalRule({ direction: r.direction, protocol: r.protocol, port: r.port, sources: r.sources, destinations: r.destinations, server_id: r.server_id });
      } catch (err) {
        found.push({ subject: r.id, message: `firewall rule is not a valid rule: ${(err as Error).message}`, details: { org_id: r.org_id } });
        continue;
      }
      const same = canonical.port === r.port && JSON.stringify(canonical.sources) === JSON.stringify(r.sources) && JSON.stringify(canonical.destinations) === JSON.stringify(r.destinations);
      if (!same) found.push({ subject: r.id, message: 'firewall rule is not stored in canonical form', details: { org_id: r.org_id, sources: r.sources.join(','), destinations: r.destinations.join(',') } });
      else if (ruleDigest(canonical) !== r.rule_digest) found.push({ subject: r.id, message: 'firewall rule digest is not the digest of its canonical form', details: { org_id: r.org_id } });
    }
    const keys = await this.db.query<{ id: string; org_id: string; public_key: string; fingerprint: string }>('SELECT id, org_id, public_key, fingerprint FROM ssh_keys ORDER BY id');
    for (const k of keys) {
      try {
        const parsed = parsePublicKey(k.public_key);
        if (parsed.fingerprint !== k.fingerprint || parsed.normalized !== k.public_key) {
          found.push({ subject: k.id, message: 'SSH key fingerprint or stored line differs from its public key', details: { org_id: k.org_id, fingerprint: k.fingerprint } });
        }
      } catch (err) {
        found.push({ subject: k.id, message: `SSH key does not parse: ${(err as Error).message}`, details: { org_id: k.org_id } });
      }
    }
    return found;
  }
}
