import { Db } from '../../../shared/database/transaction';
import { BlockStorage, ProviderSnapshot, ProviderUnavailable } from '../../storage-provider/application/block-storage.port';
import { Finding, InvariantCheck } from '../application/invariant-checks.port';

/**
 * Every snapshot bought and kept (not a failed purchase) was charged exactly once: its
 * snapshot.create operation succeeded with one hold and one capture (the ledger's own checks
 * catch a second capture); a snapshot still `creating` has its operation unfinished.
 */
export class SnapshotsChargedOnceCheck implements InvariantCheck {
  readonly name = 'snapshots.charged_once';
  readonly description = 'Every snapshot past creating (not a failed purchase) has exactly one snapshot.create operation, succeeded, with one hold and one capture';

  constructor(private readonly db: Db) {}

  async findViolations(): Promise<Finding[]> {
    const rows = await this.db.query<{ id: string; org_id: string; status: string; creates: number; succeeded: number; captures: number; holds: number }>(
      `SELECT s.id, s.org_id, s.status,
              count(DISTINCT o.id)::int AS creates,
              count(DISTINCT o.id) FILTER (WHERE o.status = 'succeeded')::int AS succeeded,
              count(l.id) FILTER (WHERE l.kind = 'capture')::int AS captures,
              count(l.id) FILTER (WHERE l.kind = 'hold')::int AS holds
         FROM snapshots s
         LEFT JOIN operations o ON o.type = 'snapshot.create' AND o.params->>'snapshot_id' = s.id
         LEFT JOIN wallet_ledger l ON l.operation_id = o.id
        WHERE s.status <> 'creating' AND s.deleted_reason IS DISTINCT FROM 'purchase_failed'
        GROUP BY s.id, s.org_id, s.status
       HAVING NOT (count(DISTINCT o.id) = 1 AND count(DISTINCT o.id) FILTER (WHERE o.status = 'succeeded') = 1
                   AND count(l.id) FILTER (WHERE l.kind = 'capture') = 1 AND count(l.id) FILTER (WHERE l.kind = 'hold') = 1)
        ORDER BY s.id`,
    );
    return rows.map((r) => ({
      subject: r.id,
      message: `${r.status} snapshot has ${r.creates} snapshot.create operation(s) (${r.succeeded} succeeded), ${r.holds} hold(s) and ${r.captures} capture(s); expected 1, 1, 1, 1`,
      details: { ...r },
    }));
  }
}

/** The live snapshot counters match the snapshots (and so the limits of 10 per disk and 100 per organization hold). */
export class SnapshotCountsCheck implements InvariantCheck {
  readonly name = 'snapshots.counts_match';
  readonly description = 'The live snapshots of each disk (at most 10) and organization (at most 100) are what their counters say';

  constructor(private readonly db: Db) {}

  async findViolations(): Promise<Finding[]> {
    const rows = await this.db.query<{ scope: string; counted: number; live: number }>(
      `WITH live AS (SELECT volume_id, org_id FROM snapshots WHERE status <> 'deleted')
       SELECT coalesce(c.volume_id, x.volume_id) AS scope, coalesce(c.live, 0) AS counted, coalesce(x.n, 0)::int AS live
         FROM volume_snapshot_counts c FULL JOIN (SELECT volume_id, count(*) AS n FROM live GROUP BY volume_id) x ON x.volume_id = c.volume_id
        WHERE coalesce(c.live, 0) <> coalesce(x.n, 0) OR coalesce(x.n, 0) > 10
       UNION ALL
       SELECT coalesce(c.org_id, x.org_id), coalesce(c.live, 0), coalesce(x.n, 0)::int
         FROM org_snapshot_counts c FULL JOIN (SELECT org_id, count(*) AS n FROM live GROUP BY org_id) x ON x.org_id = c.org_id
        WHERE coalesce(c.live, 0) <> coalesce(x.n, 0) OR coalesce(x.n, 0) > 100
       ORDER BY 1`,
    );
    return rows.map((r) => ({ subject: r.scope, message: `${r.live} live snapshot(s), counter ${r.counted}`, details: r }));
  }
}

/**
 * Every live snapshot (available or suspended, no operation in flight) exists at the storage
 * provider, and no provider snapshot is left for a deleted snapshot or for none.
 */
export class ProviderSnapshotsCheck implements InvariantCheck {
  readonly name = 'provider.snapshots_match';
  readonly description = 'Every live snapshot (no operation in flight) exists at the storage provider; no provider snapshot belongs to a deleted or unknown snapshot';

  constructor(
    private readonly db: Db,
    private readonly storage: BlockStorage,
  ) {}

  async findViolations(): Promise<Finding[]> {
    let held: ProviderSnapshot[];
    try {
      held = await this.storage.listSnapshots();
    } catch (err) {
      if (!(err instanceof ProviderUnavailable)) throw err;
      return [{ subject: 'provider', message: `the storage provider could not list its snapshots: ${err.message}`, details: {} }];
    }
    const atProvider = new Set(held.map((s) => s.snapshotId));
    const rows = await this.db.query<{ id: string; org_id: string; status: string; busy: boolean }>(
      `SELECT id, org_id, status, operation_id IS NOT NULL AS busy FROM snapshots WHERE status IN ('available', 'suspended') OR id = ANY($1::text[]) ORDER BY id`,
      [[...atProvider]],
    );
    const found: Finding[] = [];
    const known = new Set<string>();
    for (const r of rows) {
      known.add(r.id);
      if (r.busy || r.status === 'creating' || r.status === 'deleting') continue;
      const live = r.status === 'available' || r.status === 'suspended';
      if (live && !atProvider.has(r.id)) found.push({ subject: r.id, message: `${r.status} snapshot is missing at the storage provider`, details: { org_id: r.org_id } });
      if (!live && atProvider.has(r.id)) found.push({ subject: r.id, message: `${r.status} snapshot still exists at the storage provider`, details: { org_id: r.org_id } });
    }
    for (const id of atProvider) {
      if (!known.has(id)) found.push({ subject: id, message: 'the storage provider holds a snapshot of no known snapshot', details: {} });
    }
    return found;
  }
}
