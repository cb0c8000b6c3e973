import { Injectable, Optional } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { Clock } from '../../../shared/kernel/clock/clock';
import { Metrics } from '../../../shared/observability/metrics';
import { WebhookStore } from '../application/webhooks.port';
import { WebhooksTelemetry } from '../application/webhooks-telemetry.port';
import { DeliveryError } from '../domain/webhook';

/**
 * Event webhook metrics: attempts by outcome (`success` or the delivery error), deliveries ended
 * by status, and, read from the database at each scrape, the pending deliveries and the outbox
 * lag (now − the earliest due next_attempt_at; 0 if none is due).
 */
@Injectable()
export class PrometheusWebhooksTelemetry extends WebhooksTelemetry {
  private readonly attempts?: Counter<'outcome'>;
  private readonly endedTotal?: Counter<'status'>;

  constructor(store: WebhookStore, clock: Clock, @Optional() metrics?: Metrics) {
    super();
    if (!metrics) return;
    const registers = [metrics.registry];
    this.attempts = new Counter({ name: 'cds_webhook_delivery_attempts_total', help: 'Webhook delivery attempts, by outcome (success, or why it failed)', labelNames: ['outcome'] as const, registers });
    this.endedTotal = new Counter({ name: 'cds_webhook_deliveries_ended_total', help: 'Webhook deliveries ended, by status', labelNames: ['status'] as const, registers });
    let summary: Promise<{ pending: number; earliestDue: Date | null }> | undefined;
    // One query per scrape for both gauges.
    const read = () => (summary ??= store.pendingSummary(clock.now()).finally(() => setTimeout(() => (summary = undefined), 100)));
    new Gauge({
      name: 'cds_webhook_deliveries_pending',
      help: 'Webhook deliveries pending (due or waiting for a retry)',
      registers,
      async collect() {
        this.set((await read()).pending);
      },
    });
    new Gauge({
      name: 'cds_webhook_outbox_lag_seconds',
      help: 'Now minus the earliest due next_attempt_at of a pending delivery; 0 if none is due',
      registers,
      async collect() {
        const due = (await read()).earliestDue;
        this.set(due ? Math.max(0, (clock.now().getTime() - due.getTime()) / 1000) : 0);
      },
    });
  }

  attempted(outcome: 'success' | DeliveryError): void {
    this.attempts?.inc({ outcome });
  }

  ended(status: 'succeeded' | 'failed'): void {
    this.endedTotal?.inc({ status });
  }
}
