import { Module } from '@nestjs/common';
import { WebhooksWorker } from './interface/worker/webhooks.worker';
import { WebhooksModule } from './webhooks.module';

/** The delivery worker of the server process (the CLI does not import it). */
@Module({
  imports: [WebhooksModule],
  providers: [WebhooksWorker],
})
export class WebhooksWorkerModule {}
