import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { Settings } from '../../../../shared/config/settings';
import { ShutdownNotice } from '../../../../shared/lifecycle/shutdown-notice';
import { DeliverWebhooks } from '../../application/deliver-webhooks.use-case';
import { WebhookSignals } from '../../application/webhook-signals.port';

/**
 * The in-process delivery worker (unless WORKER_ENABLED=false): woken when deliveries are
 * committed (WebhookSignals: LISTEN/NOTIFY on PostgreSQL, in-process on the embedded engine) and
 * every WORKER_INTERVAL_MS (retries coming due, leases ended, lost notifications). It keeps up
 * to WEBHOOK_CONCURRENCY attempts in flight: each free slot is filled by the next claim, one
 * claim at a time. On shutdown it stops claiming and waits for the attempts in flight (each ends
 * within WEBHOOK_TIMEOUT_MS).
 */
@Injectable()
export class WebhooksWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('WebhooksWorker');
  private readonly inFlight = new Set<Promise<void>>();
  private claiming = false;
  private wokenWhileClaiming = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly settings: Settings,
    private readonly deliver: DeliverWebhooks,
    private readonly signals: WebhookSignals,
    private readonly shutdown: ShutdownNotice,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.settings.workerEnabled) return;
    this.unsubscribe = this.signals.onWork(() => this.wake());
    this.shutdown.onBegin(() => this.stop());
    this.timer = setInterval(() => this.wake(), this.settings.workerIntervalMs);
    this.timer.unref();
    this.wake();
  }

  wake(): void {
    if (this.stopped) return;
    if (this.claiming) {
      this.wokenWhileClaiming = true;
      return;
    }
    void this.fill();
  }

  private async fill(): Promise<void> {
    this.claiming = true;
    try {
      for (;;) {
        this.wokenWhileClaiming = false;
        const free = this.settings.webhookConcurrency - this.inFlight.size;
        if (this.stopped || free <= 0) return;
        const claimed = await this.deliver.claim(free);
        for (const delivery of claimed) {
          const attempt: Promise<void> = this.deliver.attempt(delivery).finally(() => {
            this.inFlight.delete(attempt);
            this.wake();
          });
          this.inFlight.add(attempt);
        }
        // Claimed nothing while attempts are in flight (an endpoint at its limit of 4, say): their
        // ends wake this again; claiming at every commit meanwhile would only spin.
        if (claimed.length === 0 && this.inFlight.size > 0) return;
        if (claimed.length < free && !this.wokenWhileClaiming) return;
      }
    } catch (err) {
      this.logger.warn({ msg: 'could not claim webhook deliveries; trying again at the next wake-up', err: err instanceof Error ? err.message : String(err) });
    } finally {
      this.claiming = false;
    }
  }

  private stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    this.unsubscribe?.();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stop();
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }
}
