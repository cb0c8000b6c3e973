import { Injectable } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { Settings } from '../../../../shared/config/settings';
import { SweepJob } from '../../../../shared/jobs/periodic-job';
import { CleanUpOrphanInstances } from '../../application/clean-up-orphan-instances.use-case';

/**
 * Every ORPHAN_INSTANCE_SWEEP_INTERVAL_MS (a minute), in worker processes: deletes at the compute
 * provider the instances of deleted or unknown servers that no unfinished operation names.
 */
@Injectable()
export class CleanUpOrphanInstancesJob extends SweepJob {
  constructor(settings: Settings, scheduler: SchedulerRegistry, cleanUp: CleanUpOrphanInstances) {
    super('orphan-instance-sweep', settings.orphanInstanceSweepIntervalMs, 'orphan instances deleted at the provider', cleanUp, settings, scheduler);
  }
}
