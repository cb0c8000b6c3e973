import { Injectable } from '@nestjs/common';
import { Db } from '../../../shared/database/transaction';
import { PricePair } from '../../../shared/kernel/money/money';
import { Page, PageCursor } from '../../../shared/kernel/pagination/cursor';
import { CopyReads, CopyTermRow, claimCopies, copyTermOf, copyTermValues, regionPricePair, saveCopyRenewal, updateCopy } from '../../prepaid/infrastructure/copy-rows';
import { DeletedReason, RenewedTerms } from '../../prepaid/domain/term';
import { DueReservedIp, NewReservedIp, ReservedIpChanges, ReservedIpFilter, ReservedIpRepository, TargetServer } from '../application/reserved-ips.port';
import { ReservedIp, ReservedIpStatus } from '../domain/reserved-ip';

interface Row extends CopyTermRow {
  id: string;
  org_id: string;
  ip: string;
  region_id: string;
  status: ReservedIpStatus;
  server_id: string | null;
  pending_server_id: string | null;
  released_at: Date | null;
  released_reason: DeletedReason | null;
}

const SELECT = `SELECT r.id, r.org_id, host(r.ip) AS ip, r.region_id, r.status, r.server_id, r.pending_server_id, r.term_months,
         r.billing_currency, r.billing_amount::text, r.price_usd_minor::text, r.price_idr_minor::text, r.expires_at,
         r.auto_renew_enabled, r.auto_renew_term_months, r.labels, r.operation_id, r.created_at,
         r.suspended_at, r.release_at, r.released_at, r.released_reason
    FROM reserved_ips r`;

const toReservedIp = (r: Row): ReservedIp => ({
  id: r.id,
  orgId: r.org_id,
  ip: r.ip,
  regionId: r.region_id,
  status: r.status,
  serverId: r.server_id,
  pendingServerId: r.pending_server_id,
  ...copyTermOf(r),
  suspendedAt: r.suspended_at,
  releaseAt: r.release_at,
  releasedAt: r.released_at,
  releasedReason: r.released_reason,
});

/**
 * The reservations' SQL. The pool's rows are the capacity guard: allocate() takes a free row FOR
 * UPDATE SKIP LOCKED and names the reservation in it, so racing reservations of one region each
 * take another address and none takes one more than the pool holds; the unique indexes of
 * migration ReservedIps1764000000490 (one live reservation per address, one per server) are the
 * last word.
 */
@Injectable()
export class TypeOrmReservedIpRepository extends CopyReads<Row, ReservedIp> implements ReservedIpRepository {
  /** Its reads by id (CopyReads) and its update, renewal, region price and claims (copy-rows.ts) are the prepaid copies'. */
  constructor(db: Db) {
    super(db, { alias: 'r', select: SELECT, statements: 'reserved_ips' }, toReservedIp);
  }

  regionPrice(regionId: string): Promise<PricePair | null | undefined> {
    return regionPricePair(this.db, 'reserved_ipv4', regionId, 'reserved_ips_region_price');
  }

  async allocate(regionId: string, id: string, now: Date): Promise<string | undefined> {
    const row = await this.db.one<{ ip: string }>(
      `UPDATE reserved_ip_pool p SET reserved_ip_id = $2
         FROM (SELECT ip FROM reserved_ip_pool
                WHERE region_id = $1 AND reserved_ip_id IS NULL AND available_after <= $3
                ORDER BY ip LIMIT 1 FOR UPDATE SKIP LOCKED) free
        WHERE p.ip = free.ip
        RETURNING host(p.ip) AS ip`,
      [regionId, id, now],
      'reserved_ip_pool_allocate',
    );
    return row?.ip;
  }

  async create(r: NewReservedIp): Promise<ReservedIp> {
    await this.db.query(
      `INSERT INTO reserved_ips (id, org_id, ip, region_id, status, pending_server_id, term_months, billing_currency, billing_amount,
                                 price_usd_minor, price_idr_minor, expires_at, auto_renew_enabled, auto_renew_term_months, labels,
                                 operation_id, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
      [
        r.id, r.orgId, r.ip, r.regionId, r.status, r.pendingServerId, ...copyTermValues(r),
      ],
      'reserved_ips_create',
    );
    return (await this.findInOrg(r.orgId, r.id))!;
  }

  listInOrg(orgId: string, query: { limit: number; after?: PageCursor; filter: ReservedIpFilter }): Promise<Page<ReservedIp>> {
    const f = query.filter;
    return this.listPage(orgId, query, (where, param) => {
      if (f.status === undefined) where.push(`r.status <> 'released'`);
      else where.push(`r.status = ${param(f.status)}`);
      if (f.regionId !== undefined) where.push(`r.region_id = ${param(f.regionId)}`);
      if (f.labels?.length) where.push(`r.labels @> ${param(JSON.stringify(Object.fromEntries(f.labels)))}::jsonb`);
    });
  }

  update(id: string, changes: ReservedIpChanges): Promise<void> {
    return updateCopy(this.db, 'reserved_ips', id, changes);
  }

  async setOperation(id: string, operationId: string | null, pendingServerId: string | null = null): Promise<void> {
    await this.db.query('UPDATE reserved_ips SET operation_id = $2, pending_server_id = $3 WHERE id = $1', [id, operationId, pendingServerId], 'reserved_ips_set_operation');
  }

  async lockServer(orgId: string, serverId: string): Promise<TargetServer | undefined> {
    const row = await this.db.one<{ id: string; org_id: string; region_id: string; status: string; instance_missing_since: Date | null }>(
      'SELECT id, org_id, region_id, status, instance_missing_since FROM servers WHERE org_id = $1 AND id = $2 FOR UPDATE',
      [orgId, serverId],
      'reserved_ips_lock_server',
    );
    return row && { id: row.id, orgId: row.org_id, regionId: row.region_id, status: row.status, instanceMissingSince: row.instance_missing_since };
  }

  async holdingServer(serverId: string): Promise<string | undefined> {
    const row = await this.db.one<{ id: string }>(
      'SELECT id FROM reserved_ips WHERE server_id = $1 OR pending_server_id = $1 LIMIT 1',
      [serverId],
      'reserved_ips_holding_server',
    );
    return row?.id;
  }

  async unfinishedServerOperation(serverId: string): Promise<string | undefined> {
    const row = await this.db.one<{ id: string }>(
      `SELECT id FROM operations WHERE vm_id = $1 AND status IN ('pending', 'running') ORDER BY created_at, id LIMIT 1`,
      [serverId],
      'reserved_ips_server_unfinished',
    );
    return row?.id;
  }

  async markAllocated(id: string, expiresAt: Date, done: boolean): Promise<void> {
    await this.db.query(
      `UPDATE reserved_ips SET status = 'available', expires_at = $2,
              operation_id = CASE WHEN $3::boolean THEN NULL ELSE operation_id END,
              pending_server_id = CASE WHEN $3::boolean THEN NULL ELSE pending_server_id END
        WHERE id = $1 AND status = 'allocating'`,
      [id, expiresAt, done],
      'reserved_ips_allocated',
    );
  }

  async markAssigned(id: string, serverId: string): Promise<void> {
    await this.db.query(
      `UPDATE reserved_ips SET status = 'assigned', server_id = $2, pending_server_id = NULL, operation_id = NULL WHERE id = $1`,
      [id, serverId],
      'reserved_ips_assigned',
    );
  }

  async markUnassigned(id: string): Promise<void> {
    await this.db.query(
      `UPDATE reserved_ips SET status = CASE WHEN status = 'assigned' THEN 'available' ELSE status END,
              server_id = NULL, pending_server_id = NULL, operation_id = NULL
        WHERE id = $1`,
      [id],
      'reserved_ips_unassigned',
    );
  }

  async markSuspended(id: string, at: Date, releaseAt: Date): Promise<void> {
    await this.db.query(
      `UPDATE reserved_ips SET status = 'suspended', server_id = NULL, pending_server_id = NULL, operation_id = NULL, suspended_at = $2, release_at = $3
        WHERE id = $1 AND status IN ('available', 'assigned')`,
      [id, at, releaseAt],
      'reserved_ips_suspended',
    );
  }

  async markReleased(id: string, at: Date, reason: DeletedReason, cooldownUntil: Date): Promise<void> {
    await this.db.query(
      `UPDATE reserved_ips SET status = 'released', released_at = $2, released_reason = COALESCE(released_reason, $3), server_id = NULL,
              pending_server_id = NULL, operation_id = NULL, suspended_at = NULL, release_at = NULL
        WHERE id = $1 AND status <> 'released'`,
      [id, at, reason],
      'reserved_ips_released',
    );
    await this.db.query(
      'UPDATE reserved_ip_pool SET reserved_ip_id = NULL, available_after = $2 WHERE reserved_ip_id = $1',
      [id, cooldownUntil],
      'reserved_ip_pool_free',
    );
  }

  saveRenewal(id: string, terms: RenewedTerms): Promise<void> {
    return saveCopyRenewal(this.db, 'reserved_ips', id, terms, 'reserved_ips_renewal');
  }

  claimExpired(now: Date, limit: number): Promise<DueReservedIp[]> {
    return claimCopies(
      this.db,
      `${SELECT} WHERE r.status IN ('available', 'assigned') AND r.expires_at <= $1 AND r.operation_id IS NULL ORDER BY r.expires_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [now, limit],
      'reserved_ips_claim_expired',
    );
  }

  claimReleasable(now: Date, limit: number): Promise<DueReservedIp[]> {
    return claimCopies(
      this.db,
      `${SELECT} WHERE r.status = 'suspended' AND r.release_at <= $1 AND r.operation_id IS NULL ORDER BY r.release_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [now, limit],
      'reserved_ips_claim_releasable',
    );
  }

  async settledAfter(after: string, limit: number): Promise<{ id: string; orgId: string; ip: string; serverId: string | null }[]> {
    const rows = await this.db.query<{ id: string; org_id: string; ip: string; server_id: string | null }>(
      `SELECT id, org_id, host(ip) AS ip, server_id FROM reserved_ips
        WHERE status IN ('available', 'assigned', 'suspended') AND operation_id IS NULL AND id > $1 ORDER BY id LIMIT $2`,
      [after, limit],
      'reserved_ips_settled_after',
    );
    return rows.map((r) => ({ id: r.id, orgId: r.org_id, ip: r.ip, serverId: r.server_id }));
  }

}
