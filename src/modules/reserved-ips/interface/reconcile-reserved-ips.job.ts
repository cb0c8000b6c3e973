import { Injectable } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { Settings } from '../../../shared/config/settings';
import { PeriodicJob } from '../../../shared/jobs/periodic-job';
import { ReconcileReservedIps } from '../application/reconcile-reserved-ips.use-case';

/** Every RECONCILE_SWEEP_INTERVAL_MS, in worker processes: reservations whose assignment differs from the compute provider's, repaired (the provider wins), audited. */
@Injectable()
export class ReconcileReservedIpsJob extends PeriodicJob {
  protected readonly removed = 'reserved addresses reconciled with the compute provider';

  constructor(
    settings: Settings,
    scheduler: SchedulerRegistry,
    private readonly reconcile: ReconcileReservedIps,
  ) {
    super('reserved-ip-reconcile-sweep', settings.reconcileSweepIntervalMs, settings, scheduler);
  }

  protected runOnce(stopping: () => boolean): Promise<number> {
    return this.reconcile.execute(stopping);
  }
}
