import { Injectable } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { Settings } from '../../../../shared/config/settings';
import { PeriodicJob } from '../../../../shared/jobs/periodic-job';
import { ReconcileVolumesWithProvider } from '../../application/reconcile-volumes.use-case';

/**
 * Every RECONCILE_SWEEP_INTERVAL_MS (a minute), in worker processes: repairs the live volumes
 * whose row differs from their disk at the provider (calls whose answers were lost), audited.
 */
@Injectable()
export class ReconcileVolumesJob extends PeriodicJob {
  protected readonly removed = 'volumes reconciled with their disk at the provider';

  constructor(
    settings: Settings,
    scheduler: SchedulerRegistry,
    private readonly reconcile: ReconcileVolumesWithProvider,
  ) {
    super('volume-reconcile-sweep', settings.reconcileSweepIntervalMs, settings, scheduler);
  }

  protected runOnce(stopping: () => boolean): Promise<number> {
    return this.reconcile.execute(stopping);
  }
}
