import { Injectable } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { Settings } from '../../../../shared/config/settings';
import { SweepJob } from '../../../../shared/jobs/periodic-job';
import { CleanUpOrphanImages } from '../../application/clean-up-orphan-images.use-case';

/**
 * Every ORPHAN_INSTANCE_SWEEP_INTERVAL_MS (a minute, the compute provider's orphan sweeps), in
 * worker processes: deletes at the compute provider the server images whose row is deleted or
 * unknown and that no unfinished operation names.
 */
@Injectable()
export class CleanUpOrphanImagesJob extends SweepJob {
  constructor(settings: Settings, scheduler: SchedulerRegistry, cleanUp: CleanUpOrphanImages) {
    super('orphan-image-sweep', settings.orphanInstanceSweepIntervalMs, 'orphan server images deleted at the provider', cleanUp, settings, scheduler);
  }
}
