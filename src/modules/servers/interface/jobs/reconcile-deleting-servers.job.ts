import { Injectable } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { Settings } from '../../../../shared/config/settings';
import { PeriodicJob } from '../../../../shared/jobs/periodic-job';
import { ReconcileDeletingServers } from '../../application/reconcile-deleting-servers.use-case';

/**
 * Every RECONCILE_SWEEP_INTERVAL_MS (a minute), in worker processes: settles the servers a failed
 * deletion left `deleting` because their instance could not be read, from the instance now.
 */
@Injectable()
export class ReconcileDeletingServersJob extends PeriodicJob {
  protected readonly removed = 'deleting servers settled from their instance at the provider';

  constructor(
    settings: Settings,
    scheduler: SchedulerRegistry,
    private readonly reconcile: ReconcileDeletingServers,
  ) {
    super('server-deleting-reconcile-sweep', settings.reconcileSweepIntervalMs, settings, scheduler);
  }

  protected runOnce(stopping: () => boolean): Promise<number> {
    return this.reconcile.execute(stopping);
  }
}
