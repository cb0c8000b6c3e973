import { Injectable } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { Settings } from '../../../../shared/config/settings';
import { SweepJob } from '../../../../shared/jobs/periodic-job';
import { CleanUpOrphanSnapshots } from '../../application/clean-up-orphan-snapshots.use-case';

/**
 * Every ORPHAN_DISK_SWEEP_INTERVAL_MS (a minute, the storage provider's orphan sweeps), in worker
 * processes: deletes at the storage provider the snapshots whose row is deleted or unknown and that
 * no unfinished operation names.
 */
@Injectable()
export class CleanUpOrphanSnapshotsJob extends SweepJob {
  constructor(settings: Settings, scheduler: SchedulerRegistry, cleanUp: CleanUpOrphanSnapshots) {
    super('orphan-snapshot-sweep', settings.orphanDiskSweepIntervalMs, 'orphan snapshots deleted at the provider', cleanUp, settings, scheduler);
  }
}
