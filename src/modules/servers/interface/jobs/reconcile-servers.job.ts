import { Injectable } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { Settings } from '../../../../shared/config/settings';
import { PeriodicJob } from '../../../../shared/jobs/periodic-job';
import { ReconcileServersWithProvider } from '../../application/reconcile-servers.use-case';

/**
 * Every RECONCILE_SWEEP_INTERVAL_MS (a minute, the volume sweep's setting), in worker processes:
 * repairs the live servers whose row differs from their instance at the compute provider (calls
 * whose answers were lost), audited.
 */
@Injectable()
export class ReconcileServersJob extends PeriodicJob {
  protected readonly removed = 'servers reconciled with their instance at the provider';

  constructor(
    settings: Settings,
    scheduler: SchedulerRegistry,
    private readonly reconcile: ReconcileServersWithProvider,
  ) {
    super('server-reconcile-sweep', settings.reconcileSweepIntervalMs, settings, scheduler);
  }

  protected runOnce(stopping: () => boolean): Promise<number> {
    return this.reconcile.execute(stopping);
  }
}
