import { Injectable } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { Settings } from '../../../../shared/config/settings';
import { PeriodicJob } from '../../../../shared/jobs/periodic-job';
import { RetentionPurge } from '../../infrastructure/retention-purge';

export const RETENTION_INTERVAL_MS = 60 * 60 * 1000;

/** Hourly, in processes that run the worker: failed-login rows past 90 days, quotes expired unused past 7 days. */
@Injectable()
export class RetentionJob extends PeriodicJob {
  constructor(
    settings: Settings,
    scheduler: SchedulerRegistry,
    private readonly purge: RetentionPurge,
  ) {
    super('retention', RETENTION_INTERVAL_MS, settings, scheduler);
  }

  protected async runOnce(): Promise<number> {
    const { failedLogins, quotes } = await this.purge.execute();
    return failedLogins + quotes;
  }
}
