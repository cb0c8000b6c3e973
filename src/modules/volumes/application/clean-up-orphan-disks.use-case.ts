import { Injectable, Logger } from '@nestjs/common';
import { ProviderGateway } from '../../storage-provider/application/provider-gateway';
import { VolumeStates } from './volume-states.port';

/** Disks the sweep reads from the provider at a time (one page of BlockStorage.listDisks). */
export const ORPHAN_SWEEP_PAGE = 500;

/**
 * A failed purchase deletes the disk the provider made for it (the executor's compensation), but
 * when the provider cannot be reached then, or the process dies first, the disk stays. This
 * sweep, run every ORPHAN_DISK_SWEEP_INTERVAL_MS by the worker processes (CleanUpOrphanDisksJob),
 * deletes at the provider every disk whose volume is deleted (or unknown) and has no operation in
 * flight; `cli verify` (provider.disks_match_volumes) reports such a disk until it has run.
 *
 * It walks the provider's disks a page at a time (memory stays bounded however many disks there
 * are), holds no database connection while it calls the provider, and stops between two disks
 * once `stopping()` says so (a shutdown does not wait for a long sweep). Returns how many disks
 * it deleted.
 */
@Injectable()
export class CleanUpOrphanDisks {
  private readonly logger = new Logger('CleanUpOrphanDisks');

  constructor(
    private readonly provider: ProviderGateway,
    private readonly states: VolumeStates,
  ) {}

  async execute(stopping: () => boolean = () => false, pageSize = ORPHAN_SWEEP_PAGE): Promise<number> {
    let deleted = 0;
    let after: string | undefined;
    while (!stopping()) {
      const disks = await this.provider.listDisks({ after, limit: pageSize });
      if (disks.length === 0) break;
      after = disks[disks.length - 1].volumeId;
      for (const volumeId of await this.states.goneAmong(disks.map((d) => d.volumeId))) {
        if (stopping()) break;
        try {
          await this.provider.deleteDisk({ volumeId, step: 'orphan-cleanup' });
          deleted += 1;
          this.logger.log({ msg: 'deleted the disk of a deleted volume at the provider', volume_id: volumeId });
        } catch (err) {
          this.logger.warn({ msg: 'could not delete an orphan disk; the next sweep tries again', volume_id: volumeId, err: err instanceof Error ? err.message : String(err) });
        }
      }
      if (disks.length < pageSize) break;
    }
    return deleted;
  }
}
