import { Injectable, Logger } from '@nestjs/common';
import { ProviderGateway } from './provider-gateway';
import { VolumeStates } from './volume-states.port';

/**
 * A failed purchase deletes the disk the provider made for it (the executor's compensation), but
 * when the provider cannot be reached then, the disk stays. This sweep, run every minute by the
 * worker processes, deletes at the provider every disk whose volume is deleted (or unknown) and
 * has no operation in flight; `cli verify` (provider.disks_match_volumes) reports such a disk
 * until it has run. Returns how many disks it deleted.
 */
@Injectable()
export class CleanUpOrphanDisks {
  private readonly logger = new Logger('CleanUpOrphanDisks');

  constructor(
    private readonly provider: ProviderGateway,
    private readonly states: VolumeStates,
  ) {}

  async execute(): Promise<number> {
    const disks = await this.provider.listDisks();
    const gone = await this.states.goneAmong(disks.map((d) => d.volumeId));
    let deleted = 0;
    for (const volumeId of gone) {
      try {
        await this.provider.deleteDisk({ volumeId, step: 'orphan-cleanup' });
        deleted += 1;
      } catch (err) {
        this.logger.warn({ msg: 'could not delete an orphan disk; the next sweep tries again', volume_id: volumeId, err: err instanceof Error ? err.message : String(err) });
      }
    }
    return deleted;
  }
}
