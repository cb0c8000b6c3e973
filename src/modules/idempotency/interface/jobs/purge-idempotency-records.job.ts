import { Injectable } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { Settings } from '../../../../shared/config/settings';
import { PeriodicJob } from '../../../../shared/jobs/periodic-job';
import { PurgeExpiredIdempotencyRecords } from '../../application/purge-expired-records.use-case';

export const PURGE_INTERVAL_MS = 60 * 60 * 1000;

/** Hourly: deletes expired idempotency records. Runs in processes that run the worker. */
@Injectable()
export class PurgeIdempotencyRecordsJob extends PeriodicJob {
  constructor(
    settings: Settings,
    scheduler: SchedulerRegistry,
    private readonly purge: PurgeExpiredIdempotencyRecords,
  ) {
    super('idempotency-purge', PURGE_INTERVAL_MS, settings, scheduler);
  }

  protected runOnce(): Promise<number> {
    return this.purge.execute();
  }
}
