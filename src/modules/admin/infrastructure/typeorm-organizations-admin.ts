import { Injectable } from '@nestjs/common';
import { Db } from '../../../shared/database/transaction';
import { OrganizationDetail, OrganizationSummary, OrganizationsAdmin } from '../application/organizations-admin.port';

interface OrgRow {
  id: string;
  name: string;
  created_at: Date;
  suspended_at: Date | null;
  suspension_reason: string | null;
  server_limit: number | null;
  api_key_limit: number | null;
  firewall_rule_limit: number | null;
}

@Injectable()
export class TypeOrmOrganizationsAdmin extends OrganizationsAdmin {
  constructor(private readonly db: Db) {
    super();
  }

  async search(q: string | undefined, limit: number, afterId: string | undefined): Promise<OrganizationSummary[]> {
    const params: unknown[] = [afterId ?? '', limit];
    let where = 'o.id > $1';
    if (q !== undefined && q !== '') {
      params.push(q, q.toLowerCase(), `${q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
      where += ` AND (o.id = $3 OR lower(o.name) LIKE $5 OR EXISTS (SELECT 1 FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.org_id = o.id AND u.email = $4))`;
    }
    const rows = await this.db.query<OrgRow>(`SELECT o.id, o.name, o.created_at, o.suspended_at FROM organizations o WHERE ${where} ORDER BY o.id LIMIT $2`, params);
    return rows.map((r) => ({ id: r.id, name: r.name, createdAt: r.created_at, suspendedAt: r.suspended_at }));
  }

  async exists(id: string): Promise<boolean> {
    return (await this.db.query('SELECT 1 FROM organizations WHERE id = $1', [id])).length > 0;
  }

  async detail(id: string): Promise<OrganizationDetail | undefined> {
    const [org] = await this.db.query<OrgRow & { servers: string; volumes: string; api_keys: string; firewall_rules: string }>(
      `SELECT o.id, o.name, o.created_at, o.suspended_at, o.suspension_reason, o.server_limit, o.api_key_limit, o.firewall_rule_limit,
              (SELECT count(*) FROM servers s WHERE s.org_id = o.id AND s.status <> 'deleted')::text AS servers,
              (SELECT count(*) FROM volumes v WHERE v.org_id = o.id AND v.status <> 'deleted')::text AS volumes,
              (SELECT count(*) FROM api_keys k WHERE k.org_id = o.id AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now()))::text AS api_keys,
              (SELECT count(*) FROM firewall_rules f WHERE f.org_id = o.id)::text AS firewall_rules
         FROM organizations o WHERE o.id = $1`,
      [id],
    );
    if (!org) return undefined;
    const members = await this.db.query<{ user_id: string; email: string; role: string; created_at: Date }>(
      'SELECT m.user_id, u.email, m.role, m.created_at FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.org_id = $1 ORDER BY m.created_at, m.user_id',
      [id],
    );
    const balances = await this.db.query<{ currency: string; available: string; reserved: string }>(
      'SELECT currency, available::text, reserved::text FROM wallet_balances WHERE org_id = $1 ORDER BY currency',
      [id],
    );
    return {
      id: org.id,
      name: org.name,
      createdAt: org.created_at,
      suspendedAt: org.suspended_at,
      suspensionReason: org.suspension_reason,
      members: members.map((m) => ({ userId: m.user_id, email: m.email, role: m.role, joinedAt: m.created_at })),
      balances,
      liveServers: Number(org.servers),
      liveVolumes: Number(org.volumes),
      limits: { servers: org.server_limit, apiKeys: org.api_key_limit, firewallRules: org.firewall_rule_limit },
      usage: { servers: Number(org.servers), apiKeys: Number(org.api_keys), firewallRules: Number(org.firewall_rules) },
    };
  }

  async lockForChange(id: string): Promise<{ suspendedAt: Date | null } | undefined> {
    const [row] = await this.db.query<{ suspended_at: Date | null }>('SELECT suspended_at FROM organizations WHERE id = $1 FOR NO KEY UPDATE', [id]);
    return row && { suspendedAt: row.suspended_at };
  }

  async usage(id: string, now: Date): Promise<{ servers: number; api_keys: number; firewall_rules: number }> {
    const [usage] = await this.db.query<{ servers: number; api_keys: number; firewall_rules: number }>(
      `SELECT (SELECT count(*) FROM servers WHERE org_id = $1 AND deleted_at IS NULL)::int AS servers,
              (SELECT count(*) FROM api_keys WHERE org_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2))::int AS api_keys,
              (SELECT count(*) FROM firewall_rules WHERE org_id = $1)::int AS firewall_rules`,
      [id, now],
    );
    return usage;
  }

  async setLimits(id: string, changes: { column: 'server_limit' | 'api_key_limit' | 'firewall_rule_limit'; value: number | null }[]): Promise<void> {
    await this.db.query(`UPDATE organizations SET ${changes.map((c, i) => `${c.column} = $${i + 2}`).join(', ')} WHERE id = $1`, [id, ...changes.map((c) => c.value)]);
  }

  async setSuspension(id: string, at: Date | null, reason: string | null): Promise<void> {
    await this.db.query('UPDATE organizations SET suspended_at = $2, suspension_reason = $3 WHERE id = $1', [id, at, reason]);
  }
}
