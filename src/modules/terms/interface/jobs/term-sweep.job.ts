import { Injectable } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { Settings } from '../../../../shared/config/settings';
import { PeriodicJob } from '../../../../shared/jobs/periodic-job';
import { ExpireTerms } from '../../application/expire-terms.use-case';
import { SendExpiryNotices } from '../../application/send-expiry-notices.use-case';

/** Every TERM_SWEEP_MS, in worker processes: the term sweeps of terms.md (expiry notices, suspension at expires_at, release at release_at). */
@Injectable()
export class TermSweepJob extends PeriodicJob {
  protected readonly removed = 'expiry notices sent, resources suspended or released';

  constructor(
    settings: Settings,
    scheduler: SchedulerRegistry,
    private readonly expire: ExpireTerms,
    private readonly notices: SendExpiryNotices,
  ) {
    super('term-sweep', settings.termSweepMs, settings, scheduler);
  }

  protected async runOnce(stopping: () => boolean): Promise<number> {
    const sent = await this.notices.execute(stopping);
    return sent + (await this.expire.execute(stopping));
  }
}
