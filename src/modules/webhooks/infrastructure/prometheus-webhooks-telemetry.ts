import { Injectable, Optional } from '@nestjs/common';
import { Counter } from 'prom-client';
import { Metrics } from '../../../shared/observability/metrics';
import { WebhooksTelemetry } from '../application/webhooks-telemetry.port';
import { DeliveryError } from '../domain/webhook';

/**
 * Event webhook metrics: attempts by outcome (`success` or the delivery error) and deliveries
 * ended by status. The pending deliveries and the outbox lag are read with the other database
 * gauges, in their one statement (monitoring's ServiceGauges).
 */
@Injectable()
export class PrometheusWebhooksTelemetry extends WebhooksTelemetry {
  private readonly attempts?: Counter<'outcome'>;
  private readonly endedTotal?: Counter<'status'>;

  constructor(@Optional() metrics?: Metrics) {
    super();
    if (!metrics) return;
    const registers = [metrics.registry];
    this.attempts = new Counter({ name: 'cds_webhook_delivery_attempts_total', help: 'Webhook delivery attempts, by outcome (success, or why it failed)', labelNames: ['outcome'] as const, registers });
    this.endedTotal = new Counter({ name: 'cds_webhook_deliveries_ended_total', help: 'Webhook deliveries ended, by status', labelNames: ['status'] as const, registers });
  }

  attempted(outcome: 'success' | DeliveryError): void {
    this.attempts?.inc({ outcome });
  }

  ended(status: 'succeeded' | 'failed'): void {
    this.endedTotal?.inc({ status });
  }
}
