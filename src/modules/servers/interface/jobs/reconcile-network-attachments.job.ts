import { Injectable } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { Settings } from '../../../../shared/config/settings';
import { PeriodicJob } from '../../../../shared/jobs/periodic-job';
import { ReconcileNetworkAttachments } from '../../application/reconcile-network-attachments.use-case';

/** Every RECONCILE_SWEEP_INTERVAL_MS, in worker processes: private network attachments repaired from the provider's truth, audited. */
@Injectable()
export class ReconcileNetworkAttachmentsJob extends PeriodicJob {
  protected readonly removed = 'private network attachments reconciled with the provider';

  constructor(
    settings: Settings,
    scheduler: SchedulerRegistry,
    private readonly reconcile: ReconcileNetworkAttachments,
  ) {
    super('network-reconcile-sweep', settings.reconcileSweepIntervalMs, settings, scheduler);
  }

  protected runOnce(stopping: () => boolean): Promise<number> {
    return this.reconcile.execute(stopping);
  }
}
