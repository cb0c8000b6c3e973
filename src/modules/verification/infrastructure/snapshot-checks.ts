import { Db } from '../../../shared/database/transaction';
import { BlockStorage, ProviderUnavailable } from '../../storage-provider/application/block-storage.port';
import { Finding, InvariantCheck } from '../application/invariant-checks.port';
import { CopiesChargedOnceCheck, ProviderCopiesCheck } from './copy-checks';

/**
 * Every snapshot bought and kept (not a failed purchase) was charged exactly once: its
 * snapshot.create operation succeeded with one hold and one capture (the ledger's own checks
 * catch a second capture); a snapshot still `creating` has its operation unfinished.
 */
export class SnapshotsChargedOnceCheck extends CopiesChargedOnceCheck {
  constructor(db: Db) {
    super(db, {
      name: 'snapshots.charged_once',
      description: 'Every snapshot past creating (not a failed purchase) has exactly one snapshot.create operation, succeeded, with one hold and one capture',
      table: 'snapshots',
      noun: 'snapshot',
      createType: 'snapshot.create',
      idParam: 'snapshot_id',
    });
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
export class ProviderSnapshotsCheck extends ProviderCopiesCheck {
  constructor(db: Db, storage: BlockStorage) {
    super(db, {
      name: 'provider.snapshots_match',
      description: 'Every live snapshot (no operation in flight) exists at the storage provider; no provider snapshot belongs to a deleted or unknown snapshot',
      table: 'snapshots',
      noun: 'snapshot',
      provider: 'storage provider',
      cannotList: 'could not list its snapshots',
      holdsUnknown: 'holds a snapshot of no known snapshot',
      list: async () => (await storage.listSnapshots()).map((s) => s.snapshotId),
      unavailable: (err): err is ProviderUnavailable => err instanceof ProviderUnavailable,
    });
  }
}
