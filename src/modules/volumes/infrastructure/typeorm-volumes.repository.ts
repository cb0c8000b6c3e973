import { Injectable } from '@nestjs/common';
import { CHECK_VIOLATION, Db, UNIQUE_VIOLATION, constraintOf, sqlState } from '../../../shared/database/transaction';
import { DomainError, conflict } from '../../../shared/kernel/errors/domain-error';
import { Currency, Money, pricePairOfMinor } from '../../../shared/kernel/money/money';
import { Page, PageCursor, toPage } from '../../../shared/kernel/pagination/cursor';
import { VolumeType } from '../../options/domain/catalog';
import { NewVolume, ServerRepository, VolumeChanges, VolumeRepository } from '../application/volumes.port';
import { DeletedReason, RenewedTerms } from '../../prepaid/domain/term';
import { Server } from '../domain/server';
import { Volume, VolumeFilter, VolumeStatus } from '../domain/volume';
import { TermMonths } from '../../prepaid/domain/term';
import { nameTaken, regionFull } from '../domain/volume-attributes';
import { IPV6_SUBNETS_CHECK, ipv6Exhausted } from '../../options/domain/region-ipv6';
import { Labels } from '../../prepaid/domain/labels';
import { AutoRenewRow, autoRenewColumns, toAutoRenew } from '../../prepaid/infrastructure/auto-renew-columns';

export interface VolumeRow extends AutoRenewRow {
  id: string;
  org_id: string;
  name: string;
  status: VolumeStatus;
  type: VolumeType;
  region_id: string;
  zone_id: string;
  size_gb: number;
  server_id: string | null;
  server_name: string | null;
  mount_path: string | null;
  mounted: boolean;
  term_months: TermMonths;
  billing_currency: Currency;
  billing_amount: string;
  price_usd_minor: string;
  price_idr_minor: string;
  expires_at: Date;
  note: string | null;
  labels: Labels;
  delete_protection: boolean;
  created_at: Date;
  deleted_at: Date | null;
  disk_missing_since?: Date | null;
  resize_reserved_gb?: number;
  suspended_at?: Date | null;
  release_at?: Date | null;
  deleted_reason?: DeletedReason | null;
  previous_server_id?: string | null;
}

/** SELECT list of a volume joined with its server's name: `FROM volumes v LEFT JOIN servers s ON s.id = v.server_id`. */
export const VOLUME_SELECT = `
  SELECT v.id, v.org_id, v.name, v.status, v.type, v.region_id, v.zone_id, v.size_gb, v.server_id,
         s.name AS server_name, v.mount_path, v.mounted, v.term_months, v.billing_currency,
         v.billing_amount::text, v.price_usd_minor::text, v.price_idr_minor::text, v.expires_at, v.note,
         v.labels, v.delete_protection, v.created_at, v.deleted_at, v.disk_missing_since, v.resize_reserved_gb,
         v.suspended_at, v.release_at, v.deleted_reason, v.previous_server_id,
         ${autoRenewColumns('v')}
    FROM volumes v LEFT JOIN servers s ON s.id = v.server_id`;

export function toVolume(r: VolumeRow): Volume {
  return {
    id: r.id,
    orgId: r.org_id,
    name: r.name,
    status: r.status,
    type: r.type,
    regionId: r.region_id,
    zoneId: r.zone_id,
    sizeGb: r.size_gb,
    server: r.server_id ? { id: r.server_id, name: r.server_name ?? '' } : null,
    mountPath: r.mount_path,
    mounted: r.mounted,
    termMonths: r.term_months,
    billing: Money.ofMinor(r.billing_currency, BigInt(r.billing_amount)),
    price: pricePairOfMinor(r.price_usd_minor, r.price_idr_minor),
    expiresAt: r.expires_at,
    note: r.note,
    labels: r.labels,
    deleteProtection: r.delete_protection,
    createdAt: r.created_at,
    deletedAt: r.deleted_at,
    diskMissingSince: r.disk_missing_since ?? null,
    resizeReservedGb: r.resize_reserved_gb ?? 0,
    suspendedAt: r.suspended_at ?? null,
    releaseAt: r.release_at ?? null,
    deletedReason: r.deleted_reason ?? null,
    previousServerId: r.previous_server_id ?? null,
    autoRenew: toAutoRenew(r),
  };
}

@Injectable()
export class TypeOrmVolumeRepository extends VolumeRepository {
  constructor(protected readonly db: Db) {
    super();
  }

  async create(v: NewVolume): Promise<Volume> {
    try {
      // The row read back in the insert's own statement (RETURNING, joined as VOLUME_SELECT: a new volume has no server yet).
      const row = await this.db.one<VolumeRow>(
        `WITH inserted AS (INSERT INTO volumes (${INSERT_COLUMNS}) VALUES ${valuesList(1)} RETURNING *)
         ${VOLUME_SELECT.replace('FROM volumes v', 'FROM inserted v')}`,
        insertParams(v),
        'volumes_create',
      );
      return toVolume(row!);
    } catch (err) {
      if (isNameTaken(err)) throw nameTaken(v.name);
      if (sqlState(err) === UNIQUE_VIOLATION) throw conflict(`Volume ${v.id} exists already`);
      if (sqlState(err) === CHECK_VIOLATION && constraintOf(err) === 'regions_used_within_capacity') {
        throw regionFull(v.regionId, v.sizeGb);
      }
      throw err;
    }
  }

  async purchaseRoom(orgId: string, name: string, regionId: string): Promise<{ nameTaken: boolean; freeGb: number | null; zones: { id: string; available: boolean }[] }> {
    const row = await this.db.one<{ taken: boolean; free: string | null; zones: { id: string; available: boolean }[] }>(
      `SELECT EXISTS (SELECT 1 FROM volumes WHERE org_id = $1 AND name = $2 AND deleted_at IS NULL) AS taken,
              (SELECT capacity_gb - used_gb FROM region_usage WHERE id = $3)::text AS free,
              (SELECT coalesce(json_agg(json_build_object('id', id, 'available', available) ORDER BY id), '[]'::json) FROM zones WHERE region_id = $3) AS zones`,
      [orgId, name, regionId],
      'volumes_purchase_room',
    );
    return { nameTaken: row?.taken === true, freeGb: row?.free == null ? null : Number(row.free), zones: row?.zones ?? [] };
  }

  async createMany(volumes: NewVolume[]): Promise<void> {
    if (volumes.length === 0) return;
    try {
      await this.db.query(`INSERT INTO volumes (${INSERT_COLUMNS}) VALUES ${valuesList(volumes.length)}`, volumes.flatMap(insertParams));
    } catch (err) {
      if (isNameTaken(err)) throw conflict('A volume name is taken among the organization\'s volumes');
      if (sqlState(err) === UNIQUE_VIOLATION) throw conflict('A volume id exists already');
      if (sqlState(err) === CHECK_VIOLATION && constraintOf(err) === 'regions_used_within_capacity') {
        throw new DomainError('out_of_stock', 'A region has not enough disk capacity left for these volumes');
      }
      throw err;
    }
  }

  async findInOrg(orgId: string, id: string): Promise<Volume | undefined> {
    const row = await this.db.one<VolumeRow>(`${VOLUME_SELECT} WHERE v.org_id = $1 AND v.id = $2`, [orgId, id], 'volumes_find_in_org');
    return row && toVolume(row);
  }

  async lockInOrg(orgId: string, id: string): Promise<Volume | undefined> {
    const row = await this.db.one<VolumeRow>(`${VOLUME_SELECT} WHERE v.org_id = $1 AND v.id = $2 FOR UPDATE OF v`, [orgId, id], 'volumes_lock_in_org');
    return row && toVolume(row);
  }

  async lockManyInOrgs(refs: readonly { orgId: string; id: string }[]): Promise<Volume[]> {
    if (refs.length === 0) return [];
    const rows = await this.db.query<VolumeRow>(
      `${VOLUME_SELECT} JOIN unnest($1::text[], $2::text[]) AS r(org_id, id) ON r.org_id = v.org_id AND r.id = v.id
        ORDER BY v.id FOR UPDATE OF v`,
      [refs.map((r) => r.orgId), refs.map((r) => r.id)],
      'volumes_lock_many_in_orgs',
    );
    return rows.map(toVolume);
  }

  async listInOrg(orgId: string, query: { limit: number; after?: PageCursor; filter?: VolumeFilter }): Promise<Page<Volume>> {
    const params: unknown[] = [orgId, query.limit + 1];
    const where = ['v.org_id = $1'];
    const param = (value: unknown): string => `$${params.push(value)}`;
    const f = query.filter ?? {};
    if (f.status === undefined) where.push('v.deleted_at IS NULL');
    else if (f.status === 'deleted') where.push('v.deleted_at IS NOT NULL');
    else where.push(`v.deleted_at IS NULL AND v.status = ${param(f.status)}`);
    if (f.regionId !== undefined) where.push(`v.region_id = ${param(f.regionId)}`);
    if (f.zoneId !== undefined) where.push(`v.zone_id = ${param(f.zoneId)}`);
    if (f.type !== undefined) where.push(`v.type = ${param(f.type)}`);
    if (f.serverId !== undefined) where.push(`v.server_id = ${param(f.serverId)}`);
    if (f.name !== undefined) where.push(`v.name = ${param(f.name)}`);
    if (f.expiresBefore !== undefined) where.push(`v.expires_at < ${param(f.expiresBefore)}`);
    if (f.autoRenew !== undefined) where.push(`v.auto_renew_enabled = ${param(f.autoRenew)}`);
    if (f.labels?.length) where.push(`v.labels @> ${param(JSON.stringify(Object.fromEntries(f.labels)))}::jsonb`);
    if (query.after) where.push(`(v.created_at, v.id) < (${param(query.after.createdAt)}::timestamptz, ${param(query.after.id)})`);
    const sql = `SELECT l.*, to_char(l.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at_text
         FROM (${VOLUME_SELECT} WHERE ${where.join(' AND ')}
               ORDER BY v.created_at DESC, v.id DESC LIMIT $2) l
        ORDER BY l.created_at DESC, l.id DESC`;
    // The filters present decide the SQL text: each combination is its own prepared statement.
    const rows = await this.db.query<VolumeRow & { created_at_text: string }>(sql, params, this.db.statementName('volumes_list', sql));
    return toPage(rows, query.limit, (r) => ({ createdAt: r.created_at_text, id: r.id }), toVolume);
  }

  async update(id: string, changes: VolumeChanges): Promise<void> {
    const sets: string[] = [];
    const params: unknown[] = [id];
    const set = (column: string, value: unknown): void => {
      sets.push(`${column} = $${params.push(value)}`);
    };
    if (changes.name !== undefined) set('name', changes.name);
    if (changes.note !== undefined) set('note', changes.note);
    if (changes.labels !== undefined) set('labels', JSON.stringify(changes.labels));
    if (changes.deleteProtection !== undefined) set('delete_protection', changes.deleteProtection);
    if (changes.autoRenew !== undefined) {
      set('auto_renew_enabled', changes.autoRenew.enabled);
      set('auto_renew_term_months', changes.autoRenew.termMonths);
      set('auto_renew_lead_s', changes.autoRenew.leadS);
    }
    if (sets.length === 0) return;
    try {
      const { affected } = await this.db.exec(`UPDATE volumes SET ${sets.join(', ')} WHERE id = $1`, params);
      if (affected !== 1) throw new Error(`Volume ${id} does not exist`);
    } catch (err) {
      if (changes.name !== undefined && isNameTaken(err)) throw nameTaken(changes.name);
      throw err;
    }
  }

  async markDeleting(id: string): Promise<void> {
    const { affected } = await this.db.exec(`UPDATE volumes SET status = 'deleting' WHERE id = $1`, [id], 'volumes_mark_deleting');
    if (affected !== 1) throw new Error(`Volume ${id} does not exist`);
  }

  async saveRenewal(id: string, terms: RenewedTerms): Promise<void> {
    const { affected } = await this.db.exec(
      // A suspended volume renewed is live again (terms.md): available, or attached should its suspension have left it on its server.
      `UPDATE volumes SET term_months = $2, billing_currency = $3, billing_amount = $4, expires_at = $5,
              status = CASE WHEN status <> 'suspended' THEN status WHEN server_id IS NULL THEN 'available' ELSE 'attached' END
        WHERE id = $1`,
      [id, terms.termMonths, terms.billing.currency, terms.billing.minor.toString(), terms.expiresAt],
      'volumes_save_renewal',
    );
    if (affected !== 1) throw new Error(`Volume ${id} does not exist`);
  }

  async saveRenewals(renewals: readonly { id: string; terms: RenewedTerms }[]): Promise<void> {
    if (renewals.length === 0) return;
    const { affected } = await this.db.exec(
      `UPDATE volumes AS v SET term_months = r.term_months, billing_currency = r.currency, billing_amount = r.amount, expires_at = r.expires_at
         FROM unnest($1::text[], $2::int[], $3::text[], $4::numeric[], $5::timestamptz[]) AS r(id, term_months, currency, amount, expires_at)
        WHERE v.id = r.id`,
      [
        renewals.map((r) => r.id),
        renewals.map((r) => r.terms.termMonths),
        renewals.map((r) => r.terms.billing.currency),
        renewals.map((r) => r.terms.billing.minor.toString()),
        renewals.map((r) => r.terms.expiresAt),
      ],
      'volumes_save_renewals',
    );
    if (affected !== renewals.length) throw new Error(`Renewed ${affected} of ${renewals.length} volumes`);
  }
}

/** The columns a new volume's INSERT writes, in the order of insertParams(). */
const INSERT_COLUMNS = `id, org_id, name, status, type, region_id, zone_id, size_gb, server_id, mount_path, mounted,
  term_months, billing_currency, billing_amount, price_usd_minor, price_idr_minor, expires_at, note, labels, delete_protection,
  auto_renew_enabled, auto_renew_term_months, auto_renew_lead_s, created_at`;
const INSERT_WIDTH = 24;

/**
 * `($1, …, COALESCE($24::timestamptz, now())), ($25, …)`: the VALUES of `rows` volumes (at most 3,000 per statement:
 * 65,535 parameters); created_at is the volume's own when given, else the transaction's time.
 */
function valuesList(rows: number): string {
  const placeholder = (r: number, c: number): string => {
    const p = `$${r * INSERT_WIDTH + c + 1}`;
    return c === INSERT_WIDTH - 1 ? `COALESCE(${p}::timestamptz, now())` : p;
  };
  return Array.from({ length: rows }, (_, r) => `(${Array.from({ length: INSERT_WIDTH }, (_, c) => placeholder(r, c)).join(', ')})`).join(', ');
}

function insertParams(v: NewVolume): unknown[] {
  return [
    v.id, v.orgId, v.name, v.status, v.type, v.regionId, v.zoneId, v.sizeGb, v.serverId, v.mountPath, v.mounted,
    v.termMonths, v.billing.currency, v.billing.minor.toString(), v.price.USD.minor.toString(), v.price.IDR.minor.toString(),
    v.expiresAt, v.note, JSON.stringify(v.labels), v.deleteProtection,
    v.autoRenew?.enabled ?? false, v.autoRenew?.termMonths ?? null, v.autoRenew?.leadS ?? 259_200, v.createdAt ?? null,
  ];
}

/** The unique index on (org_id, name) among volumes not deleted refused the row. */
function isNameTaken(err: unknown): boolean {
  const e = err as { constraint?: unknown; driverError?: { constraint?: unknown } };
  return sqlState(err) === UNIQUE_VIOLATION && (e.driverError?.constraint ?? e.constraint) === 'volumes_org_name_live_key';
}

interface ServerRow {
  id: string;
  org_id: string;
  name: string;
  region_id: string;
  zone_id: string;
  status: string;
  created_at: Date;
  deleted_at: Date | null;
}
const toServer = (r: ServerRow): Server => ({
  id: r.id,
  orgId: r.org_id,
  name: r.name,
  regionId: r.region_id,
  zoneId: r.zone_id,
  status: r.status,
  createdAt: r.created_at,
  deletedAt: r.deleted_at,
});
const SERVER_COLUMNS = 'id, org_id, name, region_id, zone_id, status, created_at, deleted_at';

@Injectable()
export class TypeOrmServerRepository extends ServerRepository {
  constructor(private readonly db: Db) {
    super();
  }

  async create(s: { id: string; orgId: string; name: string; regionId: string; zoneId: string }): Promise<Server> {
    try {
      const [row] = await this.db.query<ServerRow>(
        `INSERT INTO servers (id, org_id, name, region_id, zone_id) VALUES ($1, $2, $3, $4, $5) RETURNING ${SERVER_COLUMNS}`,
        [s.id, s.orgId, s.name, s.regionId, s.zoneId],
      );
      return toServer(row);
    } catch (err) {
      if (sqlState(err) === UNIQUE_VIOLATION && constraintOf(err) === 'servers_org_name_live_key') {
        throw conflict(`Server name ${s.name} is taken in organization ${s.orgId}`);
      }
      if (sqlState(err) === UNIQUE_VIOLATION) throw conflict(`Server ${s.id} exists already`);
      // The region's IPv6 prefix has no /64 left for it (the IPv6 trigger's counter at its CHECK).
      if (sqlState(err) === CHECK_VIOLATION && constraintOf(err) === IPV6_SUBNETS_CHECK) throw ipv6Exhausted(s.regionId);
      throw err;
    }
  }

  async findInOrg(orgId: string, id: string): Promise<Server | undefined> {
    const row = await this.db.one<ServerRow>(`SELECT ${SERVER_COLUMNS} FROM servers WHERE org_id = $1 AND id = $2`, [orgId, id]);
    return row && toServer(row);
  }

  async lockInOrg(orgId: string, id: string): Promise<Server | undefined> {
    const row = await this.db.one<ServerRow>(
      `SELECT ${SERVER_COLUMNS} FROM servers WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL FOR UPDATE`,
      [orgId, id],
      'servers_lock_in_org',
    );
    return row && toServer(row);
  }

  async slotsTaken(serverId: string): Promise<number> {
    const row = await this.db.one<{ n: number }>(`SELECT (${SERVER_SLOTS_TAKEN('$1')})::int AS n`, [serverId], 'servers_slots_taken');
    return row?.n ?? 0;
  }

  async deletion(serverId: string): Promise<{ operationId: string | null } | undefined> {
    // Two statements: a row lock that waited for a deletion's commit sees the row as that commit
    // left it, but the rest of its statement reads the snapshot taken before the wait (READ
    // COMMITTED), without the vm.delete that commit created. The next statement sees it.
    const server = await this.db.one<{ status: string }>(`SELECT status FROM servers WHERE id = $1 FOR SHARE`, [serverId], 'servers_deletion_lock');
    if (server?.status !== 'deleting') return undefined;
    const op = await this.db.one<{ id: string }>(
      `SELECT id FROM operations WHERE vm_id = $1 AND type = 'vm.delete' AND status IN ('pending', 'running') LIMIT 1`,
      [serverId],
      'servers_deletion_operation',
    );
    return { operationId: op?.id ?? null };
  }
}

/**
 * The data disks a server holds or is about to hold (lifecycle.md "Buying": 409 quota_exceeded):
 * volumes not deleted on it (volumes_server_live_idx), plus unfinished volume.create and
 * volume.attach operations naming it whose volume is not on it yet (operations_unfinished_vm_idx).
 * `server` is an SQL expression for the server id. GET /v1/volume-options counts the same way.
 */
export const SERVER_SLOTS_TAKEN = (server: string): string => `
  (SELECT count(*) FROM volumes d WHERE d.server_id = ${server} AND d.deleted_at IS NULL)
  + (SELECT count(*) FROM operations o
      WHERE o.vm_id = ${server} AND o.status IN ('pending', 'running') AND o.type IN ('volume.create', 'volume.attach')
        AND NOT EXISTS (SELECT 1 FROM volumes ov WHERE ov.id = o.volume_id AND ov.server_id = ${server}))`;
