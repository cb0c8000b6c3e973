import { Injectable } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { Settings } from '../../../../shared/config/settings';
import { PeriodicJob } from '../../../../shared/jobs/periodic-job';
import { ExpireTerms } from '../../application/expire-terms.use-case';

/** Every TERM_SWEEP_MS, in worker processes: the term sweeps of terms.md (suspension at expires_at, release at release_at). */
@Injectable()
export class TermSweepJob extends PeriodicJob {
  protected readonly removed = 'resources suspended or released at the end of their term';

  constructor(
    settings: Settings,
    scheduler: SchedulerRegistry,
    private readonly expire: ExpireTerms,
  ) {
    super('term-sweep', settings.termSweepMs, settings, scheduler);
  }

  protected runOnce(stopping: () => boolean): Promise<number> {
    return this.expire.execute(stopping);
  }
}
