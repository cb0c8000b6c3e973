import { Injectable } from '@nestjs/common';
import { Db, UNIQUE_VIOLATION, constraintOf, sqlState } from '../../../shared/database/transaction';
import { DomainError } from '../../../shared/kernel/errors/domain-error';
import { Page, PageCursor, toPage } from '../../../shared/kernel/pagination/cursor';
import { Labels } from '../../prepaid/domain/labels';
import { Attachment, AttachmentStatus, NetworkFilter, Networks } from '../application/networks.port';
import { Network } from '../domain/network';

interface NetworkRow {
  id: string;
  org_id: string;
  name: string;
  region_id: string;
  ip_range: string;
  labels: Labels;
  server_ids: string[];
  created_at: Date;
  created_at_text: string;
}

/** Every column a Network needs: its servers (attached or being detached), the cursor's created_at with microseconds. */
const COLUMNS = `n.id, n.org_id, n.name, n.region_id, n.ip_range::text AS ip_range, n.labels, n.created_at,
  ARRAY(SELECT sn.server_id FROM server_networks sn WHERE sn.network_id = n.id AND sn.status <> 'attaching' ORDER BY sn.server_id COLLATE "C") AS server_ids,
  to_char(n.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at_text`;

const toNetwork = (r: NetworkRow): Network => ({
  id: r.id, orgId: r.org_id, name: r.name, regionId: r.region_id, ipRange: r.ip_range, labels: r.labels, serverIds: r.server_ids, createdAt: r.created_at,
});

const nameTaken = (name: string, existingId: string | undefined): DomainError =>
  new DomainError('conflict', `Network name ${name} is taken by another network of the organization`, { field: 'name', ...(existingId ? { existing_id: existingId } : {}) });

@Injectable()
export class TypeOrmNetworks extends Networks {
  constructor(private readonly db: Db) {
    super();
  }

  async lockOrganization(orgId: string): Promise<void> {
    await this.db.query('SELECT 1 FROM organizations WHERE id = $1 FOR NO KEY UPDATE', [orgId], 'networks_lock_org');
  }

  async inRegion(orgId: string, regionId: string): Promise<Network[]> {
    const rows = await this.db.query<NetworkRow>(`SELECT ${COLUMNS} FROM networks n WHERE n.org_id = $1 AND n.region_id = $2 ORDER BY n.id COLLATE "C"`, [orgId, regionId], 'networks_in_region');
    return rows.map(toNetwork);
  }

  async insert(n: Omit<Network, 'serverIds'>): Promise<void> {
    try {
      await this.db.query(
        'INSERT INTO networks (id, org_id, name, region_id, ip_range, labels, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
        [n.id, n.orgId, n.name, n.regionId, n.ipRange, JSON.stringify(n.labels), n.createdAt],
        'networks_insert',
      );
    } catch (err) {
      if (sqlState(err) === UNIQUE_VIOLATION && constraintOf(err) === 'networks_org_name_key') throw nameTaken(n.name, undefined);
      throw err;
    }
  }

  async find(orgId: string, id: string): Promise<Network | undefined> {
    const row = await this.db.one<NetworkRow>(`SELECT ${COLUMNS} FROM networks n WHERE n.org_id = $1 AND n.id = $2`, [orgId, id], 'networks_find');
    return row && toNetwork(row);
  }

  async lock(orgId: string, id: string, mode: 'share' | 'update'): Promise<Network | undefined> {
    const locked = await this.db.one(
      `SELECT id FROM networks WHERE org_id = $1 AND id = $2 ${mode === 'share' ? 'FOR SHARE' : 'FOR UPDATE'}`,
      [orgId, id],
      `networks_lock_${mode}`,
    );
    return locked ? this.find(orgId, id) : undefined;
  }

  async list(orgId: string, query: { limit: number; after?: PageCursor; filter: NetworkFilter }): Promise<Page<Network>> {
    const params: unknown[] = [orgId];
    const where = ['n.org_id = $1'];
    const add = (sql: (p: string) => string, value: unknown) => {
      params.push(value);
      where.push(sql(`$${params.length}`));
    };
    if (query.filter.regionId !== undefined) add((p) => `n.region_id = ${p}`, query.filter.regionId);
    if (query.filter.labels.length > 0) add((p) => `n.labels @> ALL (${p}::jsonb[])`, query.filter.labels.map(([key, value]) => JSON.stringify({ [key]: value })));
    if (query.after) {
      params.push(query.after.createdAt, query.after.id);
      where.push(`(n.created_at, n.id) < ($${params.length - 1}::timestamptz, $${params.length})`);
    }
    params.push(query.limit + 1);
    const sql = `SELECT ${COLUMNS} FROM networks n WHERE ${where.join(' AND ')} ORDER BY n.created_at DESC, n.id DESC LIMIT $${params.length}`;
    const rows = await this.db.query<NetworkRow>(sql, params, this.db.statementName('networks_list', sql));
    return toPage(rows, query.limit, (r) => ({ createdAt: r.created_at_text, id: r.id }), toNetwork);
  }

  async update(id: string, change: { name?: string; labels?: Labels }): Promise<void> {
    try {
      await this.db.query(
        'UPDATE networks SET name = COALESCE($2, name), labels = COALESCE($3::jsonb, labels) WHERE id = $1',
        [id, change.name ?? null, change.labels === undefined ? null : JSON.stringify(change.labels)],
        'networks_update',
      );
    } catch (err) {
      if (sqlState(err) === UNIQUE_VIOLATION && constraintOf(err) === 'networks_org_name_key') throw nameTaken(change.name ?? '', undefined);
      throw err;
    }
  }

  async delete(id: string): Promise<void> {
    await this.db.query('DELETE FROM networks WHERE id = $1', [id], 'networks_delete');
  }

  async attachedCount(networkId: string): Promise<number> {
    const row = await this.db.one<{ n: number }>('SELECT count(*)::int AS n FROM server_networks WHERE network_id = $1', [networkId], 'networks_attached_count');
    return row?.n ?? 0;
  }

  async attachedServerIds(networkId: string): Promise<string[]> {
    const rows = await this.db.query<{ server_id: string }>('SELECT server_id FROM server_networks WHERE network_id = $1 ORDER BY server_id COLLATE "C"', [networkId], 'networks_attached_ids');
    return rows.map((r) => r.server_id);
  }

  async regionExists(regionId: string): Promise<boolean> {
    return (await this.db.one('SELECT 1 FROM regions WHERE id = $1', [regionId], 'networks_region_exists')) !== undefined;
  }

  async ofServer(serverId: string): Promise<Attachment[]> {
    const rows = await this.db.query<{ server_id: string; network_id: string; ip: string; status: AttachmentStatus }>(
      'SELECT server_id, network_id, host(ip) AS ip, status FROM server_networks WHERE server_id = $1 ORDER BY network_id COLLATE "C"',
      [serverId],
      'server_networks_of_server',
    );
    return rows.map((r) => ({ serverId: r.server_id, networkId: r.network_id, ip: r.ip, status: r.status }));
  }

  async takenAddresses(networkId: string): Promise<Set<string>> {
    const rows = await this.db.query<{ ip: string }>('SELECT host(ip) AS ip FROM server_networks WHERE network_id = $1', [networkId], 'server_networks_taken');
    return new Set(rows.map((r) => r.ip));
  }

  async reserve(a: Omit<Attachment, 'status'>): Promise<'reserved' | 'taken'> {
    try {
      await this.db.query(
        "INSERT INTO server_networks (server_id, network_id, ip, status) VALUES ($1, $2, $3::inet, 'attaching')",
        [a.serverId, a.networkId, a.ip],
        'server_networks_reserve',
      );
      return 'reserved';
    } catch (err) {
      if (sqlState(err) === UNIQUE_VIOLATION && constraintOf(err) === 'server_networks_network_ip_key') return 'taken';
      throw err;
    }
  }

  async setStatus(serverId: string, networkId: string, status: AttachmentStatus): Promise<void> {
    await this.db.query('UPDATE server_networks SET status = $3 WHERE server_id = $1 AND network_id = $2', [serverId, networkId, status], 'server_networks_status');
  }

  async setAddress(serverId: string, networkId: string, ip: string): Promise<void> {
    await this.db.query('UPDATE server_networks SET ip = $3::inet WHERE server_id = $1 AND network_id = $2', [serverId, networkId, ip], 'server_networks_address');
  }

  async remove(serverId: string, networkId: string): Promise<void> {
    await this.db.query('DELETE FROM server_networks WHERE server_id = $1 AND network_id = $2', [serverId, networkId], 'server_networks_remove');
  }

  async all(): Promise<(Attachment & { orgId: string; ipRange: string })[]> {
    const rows = await this.db.query<{ server_id: string; network_id: string; ip: string; status: AttachmentStatus; org_id: string; ip_range: string }>(
      `SELECT sn.server_id, sn.network_id, host(sn.ip) AS ip, sn.status, n.org_id, n.ip_range::text AS ip_range
         FROM server_networks sn JOIN networks n ON n.id = sn.network_id JOIN servers s ON s.id = sn.server_id
        WHERE s.deleted_at IS NULL
        ORDER BY sn.server_id COLLATE "C", sn.network_id COLLATE "C"`,
      [],
      'server_networks_all',
    );
    return rows.map((r) => ({ serverId: r.server_id, networkId: r.network_id, ip: r.ip, status: r.status, orgId: r.org_id, ipRange: r.ip_range }));
  }
}
