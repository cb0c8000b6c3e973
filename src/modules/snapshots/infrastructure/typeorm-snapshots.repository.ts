import { Injectable } from '@nestjs/common';
import { CHECK_VIOLATION, Db, constraintOf, sqlState } from '../../../shared/database/transaction';
import { Page, PageCursor } from '../../../shared/kernel/pagination/cursor';
import { CopyRows, CopyTermRow, copyTermOf, copyTermValues } from '../../prepaid/infrastructure/copy-rows';
import { DeletedReason } from '../../prepaid/domain/term';
import { NewSnapshot, SnapshotFilter, SnapshotRepository } from '../application/snapshots.port';
import { SNAPSHOTS_PER_ORGANIZATION, SNAPSHOTS_PER_VOLUME, Snapshot, SnapshotStatus, snapshotQuota } from '../domain/snapshot';

interface SnapshotRow extends CopyTermRow {
  id: string;
  org_id: string;
  name: string;
  status: SnapshotStatus;
  volume_id: string;
  region_id: string;
  zone_id: string;
  type: string;
  size_gb: number;
  deleted_at: Date | null;
  deleted_reason: DeletedReason | null;
}

const SELECT = `SELECT s.id, s.org_id, s.name, s.status, s.volume_id, s.region_id, s.zone_id, s.type, s.size_gb, s.term_months,
         s.billing_currency, s.billing_amount::text, s.price_usd_minor::text, s.price_idr_minor::text, s.expires_at,
         s.auto_renew_enabled, s.auto_renew_term_months, s.labels, s.operation_id, s.created_at, s.deleted_at,
         s.suspended_at, s.release_at, s.deleted_reason
    FROM snapshots s`;

const toSnapshot = (r: SnapshotRow): Snapshot => ({
  id: r.id,
  orgId: r.org_id,
  name: r.name,
  status: r.status,
  volumeId: r.volume_id,
  regionId: r.region_id,
  zoneId: r.zone_id,
  type: r.type,
  sizeGb: r.size_gb,
  ...copyTermOf(r),
  deletedAt: r.deleted_at,
  suspendedAt: r.suspended_at,
  releaseAt: r.release_at,
  deletedReason: r.deleted_reason,
});

/**
 * The snapshots' SQL. The live counts per disk and per organization are kept by the
 * snapshots_count_live trigger in the inserting transaction; their CHECKs (10, 100) refuse the
 * insert past a limit, and the counter row's lock serialises racing inserts (migration Snapshots1764000000410).
 */
@Injectable()
export class TypeOrmSnapshotRepository extends CopyRows<SnapshotRow, Snapshot> implements SnapshotRepository {
  /** Its reads by id and its update, operation, status transitions, renewal, region price and claims (CopyRows) are shared with the other prepaid copies. */
  constructor(db: Db) {
    super(db, { table: 'snapshots', alias: 's', select: SELECT, statements: 'snapshots', idParam: 'snapshot_id' }, toSnapshot);
  }

  async create(s: NewSnapshot): Promise<Snapshot> {
    try {
      await this.db.query(
        `INSERT INTO snapshots (id, org_id, name, status, volume_id, region_id, zone_id, type, size_gb, term_months, billing_currency,
                                billing_amount, price_usd_minor, price_idr_minor, expires_at, auto_renew_enabled, auto_renew_term_months,
                                labels, operation_id, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)`,
        [
          s.id, s.orgId, s.name, s.status, s.volumeId, s.regionId, s.zoneId, s.type, s.sizeGb, ...copyTermValues(s),
        ],
        'snapshots_create',
      );
    } catch (err) {
      if (sqlState(err) === CHECK_VIOLATION && constraintOf(err) === 'volume_snapshots_within_limit') throw snapshotQuota('volume', SNAPSHOTS_PER_VOLUME);
      if (sqlState(err) === CHECK_VIOLATION && constraintOf(err) === 'org_snapshots_within_limit') throw snapshotQuota('organization', SNAPSHOTS_PER_ORGANIZATION);
      throw err;
    }
    return (await this.findInOrg(s.orgId, s.id))!;
  }

  listInOrg(orgId: string, query: { limit: number; after?: PageCursor; filter: SnapshotFilter }): Promise<Page<Snapshot>> {
    const f = query.filter;
    return this.listPage(orgId, query, (where, param) => {
      if (f.status === undefined) where.push(`s.status <> 'deleted'`);
      else where.push(`s.status = ${param(f.status)}`);
      if (f.volumeId !== undefined) where.push(`s.volume_id = ${param(f.volumeId)}`);
      if (f.regionId !== undefined) where.push(`s.region_id = ${param(f.regionId)}`);
      if (f.labels?.length) where.push(`s.labels @> ${param(JSON.stringify(Object.fromEntries(f.labels)))}::jsonb`);
    });
  }
}
