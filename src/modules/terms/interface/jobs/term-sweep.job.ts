import { Injectable } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { Settings } from '../../../../shared/config/settings';
import { PeriodicJob } from '../../../../shared/jobs/periodic-job';
import { AUTO_RENEW_ROUND, AutoRenewTerms } from '../../application/auto-renew.use-case';
import { ExpireTerms, SUSPEND_BATCH, TERM_SWEEP_BATCH } from '../../application/expire-terms.use-case';
import { inRounds } from '../../application/sweep-rounds';
import { SendExpiryNotices } from '../../application/send-expiry-notices.use-case';
import { SnapshotTerms } from '../../../snapshots/application/snapshot-terms.use-case';
import { ImageTerms } from '../../../images/application/image-terms.use-case';
import { ReservedIpTerms } from '../../../reserved-ips/application/reserved-ip-terms.use-case';

/** Every TERM_SWEEP_MS, in worker processes: the term sweeps of terms.md (automatic renewals, expiry notices, suspension at expires_at, release at release_at). */
@Injectable()
export class TermSweepJob extends PeriodicJob {
  protected readonly removed = 'resources claimed for an automatic renewal, expiry notices sent, resources suspended or released';

  private readonly restPct: number;

  constructor(
    settings: Settings,
    scheduler: SchedulerRegistry,
    private readonly expire: ExpireTerms,
    private readonly notices: SendExpiryNotices,
    private readonly autoRenew: AutoRenewTerms,
    private readonly snapshots: SnapshotTerms,
    private readonly images: ImageTerms,
    private readonly reservedIps: ReservedIpTerms,
  ) {
    super('term-sweep', settings.termSweepMs, settings, scheduler);
    this.restPct = settings.termSweepPausePct;
  }

  protected async runOnce(stopping: () => boolean): Promise<number> {
    // In rounds (inRounds): each round, one batch of each transition: notices; releases and
    // suspensions (SUSPEND_BATCH rows a statement); snapshots' and server images' (CopyTerms, their
    // own modules'); reserved addresses' (ReservedIpTerms); AUTO_RENEW_ROUND automatic renewal attempts of each kind (one transaction, one
    // acceptance statement): a backlog of one takes its share of every round without holding the
    // others back. A resource whose attempt is due is not suspended before it (claimExpired*),
    // and a renewal accepted keeps its resource from both. Between rounds of a backlog, a rest of
    // TERM_SWEEP_PAUSE_PCT of the round's time leaves the cores to requests and the worker.
    return inRounds(
      [
        { batch: TERM_SWEEP_BATCH, steps: this.notices.steps(TERM_SWEEP_BATCH) },
        { batch: SUSPEND_BATCH, steps: this.expire.steps(SUSPEND_BATCH) },
        { batch: TERM_SWEEP_BATCH, steps: this.snapshots.steps(TERM_SWEEP_BATCH) },
        { batch: TERM_SWEEP_BATCH, steps: this.images.steps(TERM_SWEEP_BATCH) },
        { batch: TERM_SWEEP_BATCH, steps: this.reservedIps.steps(TERM_SWEEP_BATCH) },
        { batch: AUTO_RENEW_ROUND, steps: this.autoRenew.steps(AUTO_RENEW_ROUND) },
      ],
      stopping,
      Date.now,
      this.restPct,
    );
  }
}
