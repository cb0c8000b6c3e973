import { Injectable } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { Settings } from '../../../../shared/config/settings';
import { SweepJob } from '../../../../shared/jobs/periodic-job';
import { CleanUpOrphanDisks } from '../../application/clean-up-orphan-disks.use-case';

/**
 * Every ORPHAN_DISK_SWEEP_INTERVAL_MS (a minute), in worker processes: deletes at the provider the
 * disks of deleted volumes (failed purchases whose compensation could not reach it).
 */
@Injectable()
export class CleanUpOrphanDisksJob extends SweepJob {
  constructor(settings: Settings, scheduler: SchedulerRegistry, cleanUp: CleanUpOrphanDisks) {
    super('orphan-disk-sweep', settings.orphanDiskSweepIntervalMs, 'orphan disks deleted at the provider', cleanUp, settings, scheduler);
  }
}
