import { Injectable } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { Settings } from '../../../../shared/config/settings';
import { PeriodicJob } from '../../../../shared/jobs/periodic-job';
import { PurgeExpiredSessions } from '../../application/purge-expired-sessions.use-case';

export const SESSION_PURGE_INTERVAL_MS = 60 * 60 * 1000;

/** Hourly: deletes expired sessions. Runs in processes that run the worker. */
@Injectable()
export class PurgeExpiredSessionsJob extends PeriodicJob {
  constructor(
    settings: Settings,
    scheduler: SchedulerRegistry,
    private readonly purge: PurgeExpiredSessions,
  ) {
    super('session-purge', SESSION_PURGE_INTERVAL_MS, settings, scheduler);
  }

  protected runOnce(): Promise<number> {
    return this.purge.execute();
  }
}
