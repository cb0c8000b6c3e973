import { Injectable } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { Settings } from '../../../../shared/config/settings';
import { PeriodicJob } from '../../../../shared/jobs/periodic-job';
import { CleanUpOrphanDisks } from '../../application/clean-up-orphan-disks.use-case';

export const ORPHAN_DISK_SWEEP_INTERVAL_MS = 60 * 1000;

/** Every minute: deletes at the provider the disks of deleted volumes (failed purchases whose compensation could not reach it). */
@Injectable()
export class CleanUpOrphanDisksJob extends PeriodicJob {
  constructor(
    settings: Settings,
    scheduler: SchedulerRegistry,
    private readonly cleanUp: CleanUpOrphanDisks,
  ) {
    super('orphan-disk-sweep', ORPHAN_DISK_SWEEP_INTERVAL_MS, settings, scheduler);
  }

  protected runOnce(): Promise<number> {
    return this.cleanUp.execute();
  }
}
