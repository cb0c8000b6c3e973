import { Injectable } from '@nestjs/common';
import { Db } from '../../../shared/database/transaction';
import { SnapshotSource, SnapshotSources } from '../application/snapshot-sources.port';

/** Reads the snapshots table (owned by the snapshots module) for a restore. */
@Injectable()
export class TypeOrmSnapshotSources extends SnapshotSources {
  constructor(private readonly db: Db) {
    super();
  }

  async lockForRestore(orgId: string, snapshotId: string): Promise<SnapshotSource | undefined> {
    const row = await this.db.one<{ id: string; status: string; region_id: string; type: string; size_gb: number }>(
      'SELECT id, status, region_id, type, size_gb FROM snapshots WHERE org_id = $1 AND id = $2 FOR SHARE',
      [orgId, snapshotId],
      'volumes_snapshot_for_restore',
    );
    return row && { id: row.id, status: row.status, regionId: row.region_id, type: row.type, sizeGb: row.size_gb };
  }
}
