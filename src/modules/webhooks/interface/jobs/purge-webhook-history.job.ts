import { Injectable } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { Settings } from '../../../../shared/config/settings';
import { Clock } from '../../../../shared/kernel/clock/clock';
import { PeriodicJob } from '../../../../shared/jobs/periodic-job';
import { WebhookStore } from '../../application/webhooks.port';

export const WEBHOOK_HISTORY_DAYS = 30;
const PURGE_INTERVAL_MS = 60 * 60 * 1000;
const BATCH = 1000;

/**
 * Hourly: deletes ended webhook deliveries older than 30 days and the events no delivery refers
 * to any more, a thousand rows a statement. Pending deliveries are never purged (`cli verify`
 * reports one pending past its schedule).
 */
@Injectable()
export class PurgeWebhookHistoryJob extends PeriodicJob {
  protected readonly removed = 'webhook deliveries and events older than 30 days purged';

  constructor(
    settings: Settings,
    scheduler: SchedulerRegistry,
    private readonly store: WebhookStore,
    private readonly clock: Clock,
  ) {
    super('webhook-history-purge', PURGE_INTERVAL_MS, settings, scheduler);
  }

  protected async runOnce(stopping: () => boolean): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - WEBHOOK_HISTORY_DAYS * 86_400_000);
    let total = 0;
    while (!stopping()) {
      const n = await this.store.purgeBefore(cutoff, BATCH);
      total += n;
      if (n === 0) break;
    }
    return total;
  }
}
