import { DeliveryError } from '../domain/webhook';

/** What the delivery workers report (Prometheus in the server; nothing in unit tests). */
export abstract class WebhooksTelemetry {
  abstract attempted(outcome: 'success' | DeliveryError): void;
  abstract ended(status: 'succeeded' | 'failed'): void;
}

export class NoWebhooksTelemetry extends WebhooksTelemetry {
  attempted(): void {}
  ended(): void {}
}
