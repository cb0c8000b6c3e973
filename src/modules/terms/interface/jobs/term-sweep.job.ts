import { Injectable } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { Settings } from '../../../../shared/config/settings';
import { PeriodicJob } from '../../../../shared/jobs/periodic-job';
import { AutoRenewTerms } from '../../application/auto-renew.use-case';
import { ExpireTerms } from '../../application/expire-terms.use-case';
import { SendExpiryNotices } from '../../application/send-expiry-notices.use-case';
import { SnapshotTerms } from '../../../snapshots/application/snapshot-terms.use-case';

/** Every TERM_SWEEP_MS, in worker processes: the term sweeps of terms.md (automatic renewals, expiry notices, suspension at expires_at, release at release_at). */
@Injectable()
export class TermSweepJob extends PeriodicJob {
  protected readonly removed = 'automatic renewals attempted, expiry notices sent, resources suspended or released';

  constructor(
    settings: Settings,
    scheduler: SchedulerRegistry,
    private readonly expire: ExpireTerms,
    private readonly notices: SendExpiryNotices,
    private readonly autoRenew: AutoRenewTerms,
    private readonly snapshots: SnapshotTerms,
  ) {
    super('term-sweep', settings.termSweepMs, settings, scheduler);
  }

  protected async runOnce(stopping: () => boolean): Promise<number> {
    // Automatic renewals first: a renewal accepted now keeps its resource from the notices and the suspension below.
    const renewed = await this.autoRenew.execute(stopping);
    const sent = await this.notices.execute(stopping);
    const expired = await this.expire.execute(stopping);
    // Snapshots (their own module): renewed, suspended or released at the end of their term.
    return renewed + sent + expired + (await this.snapshots.execute(stopping));
  }
}
