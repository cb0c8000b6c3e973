import { Injectable } from '@nestjs/common';
import { OrphanSweep } from '../../operations/application/orphan-sweep';
import { ProviderDisk } from '../../storage-provider/application/block-storage.port';
import { ProviderGateway } from '../../storage-provider/application/provider-gateway';
import { VolumeStates } from './volume-states.port';

/**
 * A failed purchase deletes the disk the provider made for it (the executor's compensation), but
 * when the provider cannot be reached then, or the process dies first, the disk stays. This
 * sweep, run every ORPHAN_DISK_SWEEP_INTERVAL_MS by the worker processes (CleanUpOrphanDisksJob),
 * deletes at the provider every disk whose volume is deleted (or unknown) and has no operation in
 * flight; `cli verify` (provider.disks_match_volumes) reports such a disk until it has run.
 *
 * The loop is OrphanSweep's (a page of BlockStorage.listDisks at a time, no database connection
 * held while it calls the provider, stops between two disks once told). Each delete's step is
 * `orphan-cleanup`. Returns how many disks it deleted.
 */
@Injectable()
export class CleanUpOrphanDisks extends OrphanSweep<ProviderDisk> {
  constructor(provider: ProviderGateway, states: VolumeStates) {
    super('CleanUpOrphanDisks', {
      deleted: 'deleted the disk of a deleted volume at the provider',
      failed: 'could not delete an orphan disk; the next sweep tries again',
      list: (page) => provider.listDisks(page),
      key: (disk) => disk.volumeId,
      goneAmong: (volumeIds) => states.goneAmong(volumeIds),
      remove: (disk) => provider.deleteDisk({ volumeId: disk.volumeId, step: 'orphan-cleanup' }),
      fields: (disk) => ({ volume_id: disk.volumeId }),
    });
  }
}
