import { Module } from '@nestjs/common';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { DeliverWebhooks } from './application/deliver-webhooks.use-case';
import { WebhookEndpoints } from './application/webhook-endpoints.use-cases';
import { HostResolver, WebhookSender } from './application/webhook-sender.port';
import { WebhookStore } from './application/webhooks.port';
import { WebhooksTelemetry } from './application/webhooks-telemetry.port';
import { EventOutboxModule } from './event-outbox.module';
import { DnsHostResolver, HttpWebhookSender } from './infrastructure/http-webhook-sender';
import { PrometheusWebhooksTelemetry } from './infrastructure/prometheus-webhooks-telemetry';
import { TypeOrmWebhookStore } from './infrastructure/typeorm-webhook.store';
import { WebhookEndpointsController } from './interface/http/webhook-endpoints.controller';

/** Event webhooks: /v1/webhook-endpoints and the delivery use case (the worker is WebhooksWorkerModule). */
@Module({
  imports: [EventOutboxModule, IdempotencyModule],
  controllers: [WebhookEndpointsController],
  providers: [
    { provide: WebhookStore, useClass: TypeOrmWebhookStore },
    { provide: HostResolver, useClass: DnsHostResolver },
    { provide: WebhookSender, useClass: HttpWebhookSender },
    { provide: WebhooksTelemetry, useClass: PrometheusWebhooksTelemetry },
    WebhookEndpoints,
    DeliverWebhooks,
  ],
  exports: [DeliverWebhooks, WebhookStore, EventOutboxModule],
})
export class WebhooksModule {}
