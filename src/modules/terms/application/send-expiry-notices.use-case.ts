import { presentAutoRenew } from '../../prepaid/domain/auto-renew';
import { Injectable } from '@nestjs/common';
import { Settings } from '../../../shared/config/settings';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { EventOutbox } from '../../webhooks/application/event-outbox.port';
import { TERM_SWEEP_BATCH, byOrg } from './expire-terms.use-case';
import { SweepStep, inRounds } from './sweep-rounds';
import { TermStore } from './term-store.port';

/**
 * terms.md "Notices", run by the term sweep before suspensions and releases: for each offset of
 * EXPIRY_NOTICES_S, the resources whose offset before expires_at has been crossed during their
 * current term, live and not suspended, each announced once per (resource, expires_at, offset)
 * (the notices' primary key; the rows claimed FOR UPDATE SKIP LOCKED and re-checked under the
 * lock, one transaction per batch).
 */
@Injectable()
export class SendExpiryNotices {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly store: TermStore,
    private readonly outbox: EventOutbox,
    private readonly settings: Settings,
    private readonly clock: Clock,
  ) {}

  /** One sweep: how many notices it sent (a batch that sends fewer than it may ends its offset and kind). */
  execute(stopping: () => boolean = () => false, batch = TERM_SWEEP_BATCH): Promise<number> {
    return inRounds([{ batch, steps: this.steps(batch) }], stopping);
  }

  /** Its transitions, one per (offset, kind): one batch each in a transaction (inRounds). */
  steps(batch = TERM_SWEEP_BATCH): SweepStep[] {
    return this.settings.expiryNoticesS.flatMap((offset) =>
      (['volume', 'server'] as const).map((kind) => () => this.uow.run(() => this.notify(kind, offset, batch))),
    );
  }

  /**
   * `server.expiring` / `volume.expiring` once per (resource, expires_at, offset), when the offset before expires_at has been crossed during the current term and the
   * resource is live and not suspended, and its auto-renew is off or its last attempt failed
   * (the wallet could not pay). Not audited.
   */
  private async notify(kind: 'volume' | 'server', offsetS: number, limit: number): Promise<number> {
    const now = this.clock.now();
    const due = byOrg(await this.store.claimNoticesDue(kind, now, offsetS, limit));
    const recorded = await this.store.recordNotices(due.map((d) => ({ resourceId: d.id, orgId: d.orgId, expiresAt: d.expiresAt, offsetS, sentAt: now })));
    const events = due
      .filter((d) => recorded.has(d.id))
      .map((d) => ({
        orgId: d.orgId,
        type: kind === 'volume' ? ('volume.expiring' as const) : ('server.expiring' as const),
        createdAt: now,
        data: {
          id: d.id,
          name: d.name,
          expires_at: d.expiresAt.toISOString(),
          days_left: Math.ceil((d.expiresAt.getTime() - now.getTime()) / 86_400_000),
          auto_renew: presentAutoRenew(d.autoRenew),
        },
      }));
    await this.outbox.recordMany(events);
    // The notices sent, not the rows claimed: a row claimed on a snapshot older than a concurrent
    // sweep's commit conflicts on insert and is not sent again; a batch that records nothing ends the loop.
    return events.length;
  }

}
