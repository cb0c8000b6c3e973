import { Injectable } from '@nestjs/common';
import { DatabaseNotifications } from '../../../shared/database/database-notifications';
import { WebhookSignals } from '../application/webhook-signals.port';

export const WEBHOOK_CHANNEL = 'cds_webhooks_work';

/**
 * WebhookSignals on the shared DatabaseNotifications: once the transaction that made deliveries
 * due commits, this process's delivery workers at once and the other processes' through one
 * coalesced notification; woken again when the listening connection was lost and reopened (a
 * notification may have been missed). The workers' periodic wake-up (WORKER_INTERVAL_MS) covers
 * a process that died between its commit and its notification.
 */
@Injectable()
export class DatabaseWebhookSignals extends WebhookSignals {
  constructor(private readonly notifications: DatabaseNotifications) {
    super();
  }

  announce(): void {
    this.notifications.afterCommit(WEBHOOK_CHANNEL, 'webhooks_notify_work', 'could not notify the other processes of due webhook deliveries; their workers find them on their next wake-up');
  }

  onWork(listener: () => void): () => void {
    const unsubscribe = this.notifications.subscribe(WEBHOOK_CHANNEL, () => listener());
    const unsubscribeReconnected = this.notifications.onReconnected(listener);
    return () => {
      unsubscribe();
      unsubscribeReconnected();
    };
  }
}
