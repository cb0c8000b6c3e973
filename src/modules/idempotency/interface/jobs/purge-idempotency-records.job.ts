import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { Settings } from '../../../../shared/config/settings';
import { PurgeExpiredIdempotencyRecords } from '../../application/purge-expired-records.use-case';

export const PURGE_INTERVAL_MS = 60 * 60 * 1000;
const NAME = 'idempotency-purge';

/** Hourly: deletes expired idempotency records. Runs in processes that run the worker. */
@Injectable()
export class PurgeIdempotencyRecordsJob implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('PurgeIdempotencyRecordsJob');
  private inFlight: Promise<void> | undefined;

  constructor(
    private readonly settings: Settings,
    private readonly scheduler: SchedulerRegistry,
    private readonly purge: PurgeExpiredIdempotencyRecords,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.settings.workerEnabled) return;
    this.scheduler.addInterval(NAME, setInterval(() => void this.tick(), PURGE_INTERVAL_MS));
  }

  private tick(): Promise<void> {
    this.inFlight ??= this.purge
      .execute()
      .then((n) => {
        if (n > 0) this.logger.log({ msg: 'expired idempotency records purged', count: n });
      })
      .catch((err: unknown) => this.logger.error({ msg: 'idempotency purge failed', err: err instanceof Error ? err.message : String(err) }))
      .finally(() => {
        this.inFlight = undefined;
      });
    return this.inFlight;
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.scheduler.doesExist('interval', NAME)) this.scheduler.deleteInterval(NAME);
    await this.inFlight;
  }
}
