import { Injectable } from '@nestjs/common';
import { OrphanSweep } from '../../operations/application/orphan-sweep';
import { ProviderSnapshot } from '../../storage-provider/application/block-storage.port';
import { ProviderGateway } from '../../storage-provider/application/provider-gateway';
import { SnapshotRepository } from './snapshots.port';

/**
 * A failed snapshot.create deletes the copy the provider made (its compensation), and a deletion
 * deletes it as its step; when the provider cannot be reached then, or the process dies first, or
 * the row went while the copy stayed, the copy is left. This sweep, run every
 * ORPHAN_DISK_SWEEP_INTERVAL_MS by the worker processes beside the orphan disk sweep
 * (CleanUpOrphanSnapshotsJob), deletes at the storage provider every snapshot whose row is deleted
 * (or unknown) and that no unfinished operation names; `cli verify` (provider.snapshots_match)
 * reports such a copy until it has run.
 *
 * The loop is OrphanSweep's (a page of BlockStorage.listSnapshots at a time, no database
 * connection held while it calls the provider, stops between two copies once told). Each delete's
 * step is `orphan-cleanup`. Returns how many copies it deleted.
 */
@Injectable()
export class CleanUpOrphanSnapshots extends OrphanSweep<ProviderSnapshot> {
  constructor(provider: ProviderGateway, snapshots: SnapshotRepository) {
    super('CleanUpOrphanSnapshots', {
      deleted: 'deleted the copy of a deleted snapshot at the provider',
      failed: 'could not delete an orphan snapshot; the next sweep tries again',
      list: (page) => provider.listSnapshots(page),
      key: (copy) => copy.snapshotId,
      goneAmong: (snapshotIds) => snapshots.goneAmong(snapshotIds),
      remove: (copy) => provider.deleteSnapshot({ snapshotId: copy.snapshotId, step: 'orphan-cleanup' }),
      fields: (copy) => ({ snapshot_id: copy.snapshotId, provider_id: copy.providerId }),
    });
  }
}
