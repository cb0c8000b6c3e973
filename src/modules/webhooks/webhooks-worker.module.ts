import { Module } from '@nestjs/common';
import { PurgeWebhookHistoryJob } from './interface/jobs/purge-webhook-history.job';
import { WebhooksWorker } from './interface/worker/webhooks.worker';
import { WebhooksModule } from './webhooks.module';

/** The delivery worker and the hourly purge of the server process (the CLI does not import them). */
@Module({
  imports: [WebhooksModule],
  providers: [WebhooksWorker, PurgeWebhookHistoryJob],
})
export class WebhooksWorkerModule {}
