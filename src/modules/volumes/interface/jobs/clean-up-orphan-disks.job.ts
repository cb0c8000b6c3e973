import { Injectable } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { Settings } from '../../../../shared/config/settings';
import { PeriodicJob } from '../../../../shared/jobs/periodic-job';
import { CleanUpOrphanDisks } from '../../application/clean-up-orphan-disks.use-case';

/**
 * Every ORPHAN_DISK_SWEEP_INTERVAL_MS (a minute), in worker processes: deletes at the provider the
 * disks of deleted volumes (failed purchases whose compensation could not reach it).
 */
@Injectable()
export class CleanUpOrphanDisksJob extends PeriodicJob {
  protected readonly removed = 'orphan disks deleted at the provider';

  constructor(
    settings: Settings,
    scheduler: SchedulerRegistry,
    private readonly cleanUp: CleanUpOrphanDisks,
  ) {
    super('orphan-disk-sweep', settings.orphanDiskSweepIntervalMs, settings, scheduler);
  }

  protected runOnce(stopping: () => boolean): Promise<number> {
    return this.cleanUp.execute(stopping);
  }
}
