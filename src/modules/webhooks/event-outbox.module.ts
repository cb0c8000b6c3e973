import { Module } from '@nestjs/common';
import { EventOutbox } from './application/event-outbox.port';
import { WebhookSignals } from './application/webhook-signals.port';
import { DatabaseWebhookSignals } from './infrastructure/database-webhook-signals';
import { TypeOrmEventOutbox } from './infrastructure/typeorm-event-outbox';

/**
 * The outbox of event webhooks, what other modules import: `EventOutbox.record(...)` in the
 * transaction of their change. Small on purpose (no controller, no worker), so that any module
 * may import it without importing the webhooks module.
 */
@Module({
  providers: [
    { provide: EventOutbox, useClass: TypeOrmEventOutbox },
    { provide: WebhookSignals, useClass: DatabaseWebhookSignals },
  ],
  exports: [EventOutbox, WebhookSignals],
})
export class EventOutboxModule {}
