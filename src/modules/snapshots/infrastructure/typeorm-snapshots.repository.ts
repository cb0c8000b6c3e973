import { Injectable } from '@nestjs/common';
import { CHECK_VIOLATION, Db, constraintOf, sqlState } from '../../../shared/database/transaction';
import { Currency, Money, pricePairOfMinor } from '../../../shared/kernel/money/money';
import { Page, PageCursor } from '../../../shared/kernel/pagination/cursor';
import { Labels } from '../../prepaid/domain/labels';
import { CopyReads, CopyRows } from '../../prepaid/infrastructure/copy-rows';
import { DeletedReason, TermMonths } from '../../prepaid/domain/term';
import { NewSnapshot, SnapshotFilter, SnapshotRepository } from '../application/snapshots.port';
import { SNAPSHOTS_PER_ORGANIZATION, SNAPSHOTS_PER_VOLUME, Snapshot, SnapshotStatus, snapshotQuota } from '../domain/snapshot';

interface SnapshotRow {
  id: string;
  org_id: string;
  name: string;
  status: SnapshotStatus;
  volume_id: string;
  region_id: string;
  zone_id: string;
  type: string;
  size_gb: number;
  term_months: TermMonths;
  billing_currency: Currency;
  billing_amount: string;
  price_usd_minor: string;
  price_idr_minor: string;
  expires_at: Date;
  auto_renew_enabled: boolean;
  auto_renew_term_months: TermMonths | null;
  labels: Labels;
  operation_id: string | null;
  created_at: Date;
  deleted_at: Date | null;
  suspended_at: Date | null;
  release_at: Date | null;
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
  termMonths: r.term_months,
  billing: Money.ofMinor(r.billing_currency, BigInt(r.billing_amount)),
  price: pricePairOfMinor(r.price_usd_minor, r.price_idr_minor),
  expiresAt: r.expires_at,
  autoRenew: { enabled: r.auto_renew_enabled, termMonths: r.auto_renew_term_months },
  labels: r.labels,
  operationId: r.operation_id,
  createdAt: r.created_at,
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
export class TypeOrmSnapshotRepository extends CopyRows implements SnapshotRepository {
  /** Its reads by id (CopyReads) and its update, operation, status transitions, renewal, region price and claims (CopyRows) are shared with the other prepaid copies. */
  private readonly reads: CopyReads<SnapshotRow, Snapshot>;

  constructor(db: Db) {
    super(db, { table: 'snapshots', alias: 's', select: SELECT, statements: 'snapshots', idParam: 'snapshot_id' });
    this.reads = new CopyReads(db, { alias: 's', select: SELECT, statements: 'snapshots' }, toSnapshot);
  }

  async create(s: NewSnapshot): Promise<Snapshot> {
    try {
      await this.db.query(
        `INSERT INTO snapshots (id, org_id, name, status, volume_id, region_id, zone_id, type, size_gb, term_months, billing_currency,
                                billing_amount, price_usd_minor, price_idr_minor, expires_at, auto_renew_enabled, auto_renew_term_months,
                                labels, operation_id, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)`,
        [
          s.id, s.orgId, s.name, s.status, s.volumeId, s.regionId, s.zoneId, s.type, s.sizeGb, s.termMonths, s.billing.currency,
          s.billing.minor.toString(), s.price.USD.minor.toString(), s.price.IDR.minor.toString(), s.expiresAt, s.autoRenew.enabled,
          s.autoRenew.termMonths, JSON.stringify(s.labels), s.operationId, s.createdAt,
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

  findInOrg(orgId: string, id: string): Promise<Snapshot | undefined> {
    return this.reads.findInOrg(orgId, id);
  }

  lockInOrg(orgId: string, id: string): Promise<Snapshot | undefined> {
    return this.reads.lockInOrg(orgId, id);
  }

  lock(id: string): Promise<Snapshot | undefined> {
    return this.reads.lock(id);
  }

  listInOrg(orgId: string, query: { limit: number; after?: PageCursor; filter: SnapshotFilter }): Promise<Page<Snapshot>> {
    const f = query.filter;
    return this.reads.listInOrg(orgId, query, (where, param) => {
      if (f.status === undefined) where.push(`s.status <> 'deleted'`);
      else where.push(`s.status = ${param(f.status)}`);
      if (f.volumeId !== undefined) where.push(`s.volume_id = ${param(f.volumeId)}`);
      if (f.regionId !== undefined) where.push(`s.region_id = ${param(f.regionId)}`);
      if (f.labels?.length) where.push(`s.labels @> ${param(JSON.stringify(Object.fromEntries(f.labels)))}::jsonb`);
    });
  }
}
