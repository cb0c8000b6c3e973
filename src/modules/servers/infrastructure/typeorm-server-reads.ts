import { Injectable } from '@nestjs/common';
import { Db } from '../../../shared/database/transaction';
import { Money, isCurrency, pricePairOfMinor } from '../../../shared/kernel/money/money';
import { Page, PageCursor, toPage } from '../../../shared/kernel/pagination/cursor';
import { ServerReads } from '../application/servers.port';
import { Server, ServerFilter, ServerStatus } from '../domain/server';
import { DeletedReason } from '../../prepaid/domain/term';
import { AutoRenewRow, autoRenewColumns, toAutoRenew } from '../../prepaid/infrastructure/auto-renew-columns';

export interface ServerRow extends AutoRenewRow {
  id: string;
  org_id: string;
  name: string;
  status: ServerStatus;
  region_id: string;
  zone_id: string;
  plan_id: string | null;
  vcpus: number | null;
  memory_gb: number | null;
  disk_gb: number | null;
  image_id: string | null;
  ipv4: string | null;
  ipv6: string | null;
  private_networks: { network_id: string; ip: string }[];
  term_months: number | null;
  billing_currency: string | null;
  billing_amount: string | null;
  price_usd_minor: string | null;
  price_idr_minor: string | null;
  expires_at: Date | null;
  labels: Record<string, string>;
  delete_protection: boolean;
  volume_ids: string[];
  ssh_key_ids: string[];
  created_at: Date;
  deleted_at: Date | null;
  instance_missing_since: Date | null;
  resize_reserved_vcpus?: number;
  suspended_at: Date | null;
  release_at: Date | null;
  deleted_reason: DeletedReason | null;
  power_before: 'running' | 'stopped' | null;
  created_at_text: string;
  reserved_ip?: { id: string; ip: string } | null;
}

/** Every column a Server needs, its live volumes by id (the id's bytes) and the cursor's created_at with microseconds. */
/** A server's columns as toServer reads them, from `s` (the servers table, or a CTE of its rows). */
export const SERVER_READ_COLUMNS = `s.id, s.org_id, s.name, s.status, s.region_id, s.zone_id, s.plan_id, s.vcpus, s.memory_gb, s.disk_gb, s.image_id,
  s.ipv4, s.ipv6, s.term_months, s.billing_currency, s.billing_amount::text, s.price_usd_minor::text, s.price_idr_minor::text,
  s.expires_at, s.labels, s.delete_protection, s.created_at, s.deleted_at, s.instance_missing_since, s.resize_reserved_vcpus, s.ssh_key_ids, s.suspended_at, s.release_at, s.deleted_reason, s.power_before,
  ${autoRenewColumns('s')},
  COALESCE((SELECT json_agg(json_build_object('network_id', sn.network_id, 'ip', host(sn.ip)) ORDER BY sn.network_id COLLATE "C")
              FROM server_networks sn WHERE sn.server_id = s.id AND sn.status <> 'attaching'), '[]'::json) AS private_networks,
  ARRAY(SELECT v.id FROM volumes v WHERE v.server_id = s.id AND v.deleted_at IS NULL ORDER BY v.id COLLATE "C") AS volume_ids,
  (SELECT json_build_object('id', rip.id, 'ip', host(rip.ip)) FROM reserved_ips rip WHERE rip.server_id = s.id) AS reserved_ip,
  to_char(s.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at_text`;

export function toServer(r: ServerRow): Server {
  const currency = r.billing_currency;
  return {
    id: r.id,
    orgId: r.org_id,
    name: r.name,
    status: r.status,
    regionId: r.region_id,
    zoneId: r.zone_id,
    plan: r.plan_id,
    vcpus: r.vcpus,
    memoryGb: r.memory_gb,
    diskGb: r.disk_gb,
    image: r.image_id,
    ipv4: r.ipv4,
    ipv6: r.ipv6,
    privateNetworks: r.private_networks.map((n) => ({ networkId: n.network_id, ip: n.ip })),
    termMonths: r.term_months,
    billing: currency !== null && isCurrency(currency) && r.billing_amount !== null ? Money.ofMinor(currency, BigInt(r.billing_amount)) : null,
    price: r.price_usd_minor !== null && r.price_idr_minor !== null ? pricePairOfMinor(r.price_usd_minor, r.price_idr_minor) : null,
    expiresAt: r.expires_at,
    labels: r.labels,
    deleteProtection: r.delete_protection,
    volumeIds: r.volume_ids,
    sshKeyIds: r.ssh_key_ids,
    createdAt: r.created_at,
    deletedAt: r.deleted_at,
    instanceMissingSince: r.instance_missing_since,
    resizeReservedVcpus: r.resize_reserved_vcpus ?? 0,
    suspendedAt: r.suspended_at,
    releaseAt: r.release_at,
    deletedReason: r.deleted_reason,
    powerBefore: r.power_before,
    autoRenew: toAutoRenew(r),
    reservedIp: r.reserved_ip ?? null,
  };
}

@Injectable()
export class TypeOrmServerReads extends ServerReads {
  constructor(private readonly db: Db) {
    super();
  }

  async findInOrg(orgId: string, id: string): Promise<Server | undefined> {
    const row = await this.db.one<ServerRow>(`SELECT ${SERVER_READ_COLUMNS} FROM servers s WHERE s.org_id = $1 AND s.id = $2`, [orgId, id], 'servers_find_in_org');
    return row && toServer(row);
  }

  async findManyInOrgs(refs: readonly { orgId: string; id: string }[]): Promise<Server[]> {
    if (refs.length === 0) return [];
    const rows = await this.db.query<ServerRow>(
      `SELECT ${SERVER_READ_COLUMNS} FROM servers s JOIN unnest($1::text[], $2::text[]) AS r(org_id, id) ON r.org_id = s.org_id AND r.id = s.id`,
      [refs.map((r) => r.orgId), refs.map((r) => r.id)],
      'servers_find_many_in_orgs',
    );
    return rows.map(toServer);
  }

  async listInOrg(orgId: string, query: { limit: number; after?: PageCursor; filter: ServerFilter }): Promise<Page<Server>> {
    const params: unknown[] = [orgId];
    const where = ['s.org_id = $1'];
    const add = (sql: (p: string) => string, value: unknown) => {
      params.push(value);
      where.push(sql(`$${params.length}`));
    };
    const f = query.filter;
    if (f.status === undefined) where.push('s.deleted_at IS NULL');
    else add((p) => `s.status = ${p}`, f.status);
    if (f.regionId !== undefined) add((p) => `s.region_id = ${p}`, f.regionId);
    if (f.zoneId !== undefined) add((p) => `s.zone_id = ${p}`, f.zoneId);
    if (f.name !== undefined) add((p) => `s.name = ${p}`, f.name);
    if (f.autoRenew !== undefined) add((p) => `s.auto_renew_enabled = ${p}`, f.autoRenew);
    // Every label given must match: one array parameter whatever their number (one statement).
    if (f.labels.length > 0) add((p) => `s.labels @> ALL (${p}::jsonb[])`, f.labels.map(([key, value]) => JSON.stringify({ [key]: value })));
    if (query.after) {
      params.push(query.after.createdAt, query.after.id);
      where.push(`(s.created_at, s.id) < ($${params.length - 1}::timestamptz, $${params.length})`);
    }
    params.push(query.limit + 1);
    const sql = `SELECT ${SERVER_READ_COLUMNS} FROM servers s WHERE ${where.join(' AND ')} ORDER BY s.created_at DESC, s.id DESC LIMIT $${params.length}`;
    // The filters present decide the SQL text: each combination is its own prepared statement.
    const rows = await this.db.query<ServerRow>(sql, params, this.db.statementName('servers_list', sql));
    return toPage(rows, query.limit, (r) => ({ createdAt: r.created_at_text, id: r.id }), toServer);
  }
}
