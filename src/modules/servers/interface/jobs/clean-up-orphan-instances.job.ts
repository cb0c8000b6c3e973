import { Injectable } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { Settings } from '../../../../shared/config/settings';
import { PeriodicJob } from '../../../../shared/jobs/periodic-job';
import { CleanUpOrphanInstances } from '../../application/clean-up-orphan-instances.use-case';

/**
 * Every ORPHAN_INSTANCE_SWEEP_INTERVAL_MS (a minute), in worker processes: deletes at the compute
 * provider the instances of deleted or unknown servers that no unfinished operation names.
 */
@Injectable()
export class CleanUpOrphanInstancesJob extends PeriodicJob {
  protected readonly removed = 'orphan instances deleted at the provider';

  constructor(
    settings: Settings,
    scheduler: SchedulerRegistry,
    private readonly cleanUp: CleanUpOrphanInstances,
  ) {
    super('orphan-instance-sweep', settings.orphanInstanceSweepIntervalMs, settings, scheduler);
  }

  protected runOnce(stopping: () => boolean): Promise<number> {
    return this.cleanUp.execute(stopping);
  }
}
