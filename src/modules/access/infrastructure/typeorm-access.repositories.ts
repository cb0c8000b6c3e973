import { Injectable } from '@nestjs/common';
import { Db, UNIQUE_VIOLATION, constraintOf, sqlState } from '../../../shared/database/transaction';
import { Page, PageCursor, toPage } from '../../../shared/kernel/pagination/cursor';
import { FirewallPushes, FirewallRuleRepository, NewFirewallRule, ServerDirectory, ServerEntry, SshKeyRepository } from '../application/access.ports';
import { DomainError } from '../../../shared/kernel/errors/domain-error';
import { Direction, FirewallRule, Protocol } from '../domain/firewall-rule';
import { SshKey } from '../domain/ssh-key';
import { SshKeyType } from '../domain/ssh-public-key';

const CREATED_AT_TEXT = `to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at_text`;

/**
 * The organization row is the lock of the per-organization limits (as for API keys). NO KEY
 * UPDATE: rows referencing the organization (FOR KEY SHARE checks) are not blocked by it.
 */
async function lockOrganization(db: Db, orgId: string): Promise<void> {
  await db.query('SELECT id FROM organizations WHERE id = $1 FOR NO KEY UPDATE', [orgId], 'access_lock_org');
}

interface SshKeyRow {
  id: string;
  org_id: string;
  name: string;
  key_type: SshKeyType;
  fingerprint: string;
  public_key: string;
  created_at: Date;
  created_at_text: string;
}

const SSH_KEY_COLUMNS = `id, org_id, name, key_type, fingerprint, public_key, created_at, ${CREATED_AT_TEXT}`;

const toSshKey = (r: SshKeyRow): SshKey => ({
  id: r.id, orgId: r.org_id, name: r.name, type: r.key_type, fingerprint: r.fingerprint, publicKey: r.public_key, createdAt: r.created_at,
});

@Injectable()
export class TypeOrmSshKeyRepository extends SshKeyRepository {
  constructor(private readonly db: Db) {
    super();
  }

  lockOrganization(orgId: string): Promise<void> {
    return lockOrganization(this.db, orgId);
  }

  async count(orgId: string): Promise<number> {
    const row = await this.db.one<{ n: number }>('SELECT count(*)::int AS n FROM ssh_keys WHERE org_id = $1', [orgId]);
    return row?.n ?? 0;
  }

  async findBy(orgId: string, column: 'fingerprint' | 'name', value: string): Promise<SshKey | undefined> {
    const row = await this.db.one<SshKeyRow>(`SELECT ${SSH_KEY_COLUMNS} FROM ssh_keys WHERE org_id = $1 AND ${column === 'name' ? 'name' : 'fingerprint'} = $2`, [orgId, value]);
    return row && toSshKey(row);
  }

  async insert(k: SshKey): Promise<SshKey | undefined> {
    const row = await this.db.one<SshKeyRow>(
      `INSERT INTO ssh_keys (id, org_id, name, key_type, fingerprint, public_key, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT DO NOTHING RETURNING ${SSH_KEY_COLUMNS}`,
      [k.id, k.orgId, k.name, k.type, k.fingerprint, k.publicKey, k.createdAt],
    );
    return row && toSshKey(row);
  }

  async get(orgId: string, id: string): Promise<SshKey | undefined> {
    const row = await this.db.one<SshKeyRow>(`SELECT ${SSH_KEY_COLUMNS} FROM ssh_keys WHERE org_id = $1 AND id = $2`, [orgId, id]);
    return row && toSshKey(row);
  }

  async list(orgId: string, filter: { fingerprint?: string; name?: string }, limit: number, after?: PageCursor): Promise<Page<SshKey>> {
    const params: unknown[] = [orgId];
    let where = 'org_id = $1';
    if (filter.fingerprint !== undefined) where += ` AND fingerprint = $${params.push(filter.fingerprint)}`;
    if (filter.name !== undefined) where += ` AND name = $${params.push(filter.name)}`;
    if (after) {
      params.push(after.createdAt, after.id);
      where += ` AND (created_at, id) < ($${params.length - 1}::timestamptz, $${params.length})`;
    }
    params.push(limit + 1);
    const rows = await this.db.query<SshKeyRow>(
      `SELECT ${SSH_KEY_COLUMNS} FROM ssh_keys WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT $${params.length}`,
      params,
    );
    return toPage(rows, limit, (r) => ({ createdAt: r.created_at_text, id: r.id }), toSshKey);
  }

  async rename(orgId: string, id: string, name: string): Promise<SshKey | undefined> {
    try {
      const row = await this.db.one<SshKeyRow>(`UPDATE ssh_keys SET name = $3 WHERE org_id = $1 AND id = $2 RETURNING ${SSH_KEY_COLUMNS}`, [orgId, id, name]);
      return row && toSshKey(row);
    } catch (err) {
      // Renames and creates are serialised by the organization's lock, so this is the safety net only.
      if (sqlState(err) === UNIQUE_VIOLATION && constraintOf(err) === 'ssh_keys_org_name_key') {
        throw new DomainError('conflict', `An SSH key named "${name}" exists already`, { field: 'name' });
      }
      throw err;
    }
  }

  async delete(orgId: string, id: string): Promise<SshKey | undefined> {
    const row = await this.db.one<SshKeyRow>(`DELETE FROM ssh_keys WHERE org_id = $1 AND id = $2 RETURNING ${SSH_KEY_COLUMNS}`, [orgId, id]);
    return row && toSshKey(row);
  }

  async findMany(orgId: string, ids: string[]): Promise<SshKey[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.query<SshKeyRow>(`SELECT ${SSH_KEY_COLUMNS} FROM ssh_keys WHERE org_id = $1 AND id = ANY($2::text[])`, [orgId, ids]);
    return rows.map(toSshKey);
  }
}

interface RuleRow {
  id: string;
  org_id: string;
  server_id: string | null;
  direction: Direction;
  protocol: Protocol;
  port: string | null;
  sources: string[];
  destinations: string[];
  description: string | null;
  created_at: Date;
  created_at_text: string;
}

const RULE_COLUMNS = `id, org_id, server_id, direction, protocol, port, sources, destinations, description, created_at, ${CREATED_AT_TEXT}`;

const toRule = (r: RuleRow): FirewallRule => ({
  id: r.id, orgId: r.org_id, serverId: r.server_id, direction: r.direction, protocol: r.protocol, port: r.port,
  sources: r.sources, destinations: r.destinations, description: r.description, createdAt: r.created_at,
});

/** Oldest first; ties by the id's bytes. */
const OLDEST_FIRST = 'ORDER BY created_at, id COLLATE "C"';

@Injectable()
export class TypeOrmFirewallRuleRepository extends FirewallRuleRepository {
  constructor(private readonly db: Db) {
    super();
  }

  lockOrganization(orgId: string): Promise<void> {
    return lockOrganization(this.db, orgId);
  }

  async count(orgId: string): Promise<number> {
    const row = await this.db.one<{ n: number }>('SELECT count(*)::int AS n FROM firewall_rules WHERE org_id = $1', [orgId]);
    return row?.n ?? 0;
  }

  async findByDigest(orgId: string, digest: string): Promise<FirewallRule | undefined> {
    const row = await this.db.one<RuleRow>(`SELECT ${RULE_COLUMNS} FROM firewall_rules WHERE org_id = $1 AND rule_digest = $2`, [orgId, digest]);
    return row && toRule(row);
  }

  async insert(r: NewFirewallRule): Promise<FirewallRule | undefined> {
    const row = await this.db.one<RuleRow>(
      `INSERT INTO firewall_rules (id, org_id, server_id, direction, protocol, port, sources, destinations, description, rule_digest)
       VALUES ($1, $2, $3, $4, $5, $6, $7::text[], $8::text[], $9, $10)
       ON CONFLICT (org_id, rule_digest) DO NOTHING RETURNING ${RULE_COLUMNS}`,
      [r.id, r.orgId, r.serverId, r.direction, r.protocol, r.port, r.sources, r.destinations, r.description, r.digest],
    );
    return row && toRule(row);
  }

  async get(orgId: string, id: string): Promise<FirewallRule | undefined> {
    const row = await this.db.one<RuleRow>(`SELECT ${RULE_COLUMNS} FROM firewall_rules WHERE org_id = $1 AND id = $2`, [orgId, id]);
    return row && toRule(row);
  }

  async list(orgId: string, serverId: string | undefined, limit: number, after?: PageCursor): Promise<Page<FirewallRule>> {
    const params: unknown[] = [orgId];
    let where = 'org_id = $1';
    if (serverId !== undefined) where += ` AND server_id = $${params.push(serverId)}`;
    if (after) {
      params.push(after.createdAt, after.id);
      where += ` AND (created_at > $${params.length - 1}::timestamptz OR (created_at = $${params.length - 1}::timestamptz AND id COLLATE "C" > $${params.length}))`;
    }
    params.push(limit + 1);
    const rows = await this.db.query<RuleRow>(`SELECT ${RULE_COLUMNS} FROM firewall_rules WHERE ${where} ${OLDEST_FIRST} LIMIT $${params.length}`, params);
    return toPage(rows, limit, (r) => ({ createdAt: r.created_at_text, id: r.id }), toRule);
  }

  async inForce(orgId: string, serverId: string): Promise<FirewallRule[]> {
    const rows = await this.db.query<RuleRow>(
      `SELECT ${RULE_COLUMNS} FROM firewall_rules WHERE org_id = $1 AND (server_id IS NULL OR server_id = $2) ${OLDEST_FIRST}`,
      [orgId, serverId],
    );
    return rows.map(toRule);
  }

  async delete(orgId: string, id: string): Promise<FirewallRule | undefined> {
    const row = await this.db.one<RuleRow>(`DELETE FROM firewall_rules WHERE org_id = $1 AND id = $2 RETURNING ${RULE_COLUMNS}`, [orgId, id]);
    return row && toRule(row);
  }

  async deleteOfServer(orgId: string, serverId: string): Promise<FirewallRule[]> {
    const rows = await this.db.query<RuleRow>(`DELETE FROM firewall_rules WHERE org_id = $1 AND server_id = $2 RETURNING ${RULE_COLUMNS}`, [orgId, serverId]);
    return rows.map(toRule).sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1));
  }
}

/** The servers table as the firewall sees it: a server is live unless deleted. */
@Injectable()
export class TypeOrmServerDirectory extends ServerDirectory {
  constructor(private readonly db: Db) {
    super();
  }

  async find(orgId: string, serverId: string, options: { share?: boolean } = {}): Promise<ServerEntry | undefined> {
    // FOR SHARE: a deletion of the server (an UPDATE of the row) waits for this transaction, so
    // it then sees, and deletes, the rule being created.
    const row = await this.db.one<{ id: string; deleted_at: Date | null }>(
      `SELECT id, deleted_at FROM servers WHERE org_id = $1 AND id = $2${options.share ? ' FOR SHARE' : ''}`,
      [orgId, serverId],
    );
    return row && { id: row.id, live: row.deleted_at === null };
  }
}

@Injectable()
export class TypeOrmFirewallPushes extends FirewallPushes {
  constructor(private readonly db: Db) {
    super();
  }

  /** Marks the servers (one, or every live one of the organization) in id order, so that concurrent marks take their rows' locks in one order and never deadlock. */
  async mark(orgId: string, serverId: string | null): Promise<string[]> {
    const rows = await this.db.query<{ server_id: string }>(
      `INSERT INTO firewall_pushes (server_id)
       SELECT id FROM servers WHERE org_id = $1 AND deleted_at IS NULL AND ($2::text IS NULL OR id = $2)
       ORDER BY id
       ON CONFLICT (server_id) DO UPDATE SET requested_at = clock_timestamp()
       RETURNING server_id`,
      [orgId, serverId],
    );
    return rows.map((r) => r.server_id);
  }

  async pending(limit: number, serverIds?: string[]): Promise<{ serverId: string; orgId: string; mark: string }[]> {
    const rows = await this.db.query<{ server_id: string; org_id: string; mark: string }>(
      `SELECT p.server_id, s.org_id, p.requested_at::text AS mark FROM firewall_pushes p JOIN servers s ON s.id = p.server_id
        WHERE $2::text[] IS NULL OR p.server_id = ANY($2::text[])
        ORDER BY p.requested_at LIMIT $1`,
      [limit, serverIds ?? null],
    );
    return rows.map((r) => ({ serverId: r.server_id, orgId: r.org_id, mark: r.mark }));
  }

  async clear(serverId: string, mark: string): Promise<void> {
    await this.db.query('DELETE FROM firewall_pushes WHERE server_id = $1 AND requested_at::text = $2', [serverId, mark]);
  }
}
