import { Injectable } from '@nestjs/common';
import { Settings } from '../../../shared/config/settings';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { DomainError } from '../../../shared/kernel/errors/domain-error';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { TERM_SWEEP_BATCH, byOrg } from '../../terms/application/expire-terms.use-case';
import { SweepStep, inRounds } from '../../terms/application/sweep-rounds';
import { ReleaseIp, RenewIp, UnassignIp } from './reserved-ip.use-cases';
import { DueReservedIp, ReservedIpRepository } from './reserved-ips.port';

/**
 * The end of a reservation's term, run by the term sweep (terms.md, as for snapshots and images):
 * a reservation still `available` or `assigned` at `expires_at` with automatic renewal on is
 * renewed then (ip.renew by actor system, audited with `data.auto: true`); otherwise, or when the
 * wallet cannot pay, it is `suspended` until `release_at` = now + VOLUME_RETENTION_S: the address
 * stays the organization's but is routed to nothing (an assigned one through an ip.unassign by
 * `system`, audited `reserved_ip.suspend`; tried again at the next sweep while its server is
 * busy). At `release_at` a reservation still suspended is released (ip.release by `system`,
 * `released_reason: "expired"`): its address goes back to the pool after IP_COOLDOWN_S. A renewal
 * meanwhile makes it available again. Rows are claimed FOR UPDATE SKIP LOCKED, one transaction a
 * batch, so several processes share the work and each row moves once.
 */
@Injectable()
export class ReservedIpTerms {
  constructor(
    private readonly rows: ReservedIpRepository,
    private readonly renewal: RenewIp,
    private readonly unassign: UnassignIp,
    private readonly release: ReleaseIp,
    private readonly uow: UnitOfWork,
    private readonly audit: AuditTrail,
    private readonly settings: Settings,
    private readonly clock: Clock,
  ) {}

  /** One sweep: how many reservations it renewed, suspended or released. */
  execute(stopping: () => boolean = () => false, batch = TERM_SWEEP_BATCH): Promise<number> {
    return inRounds([{ batch, steps: this.steps(batch) }], stopping);
  }

  /** Its transitions (release, then the end of the term), one batch each in a transaction: the term sweep's rounds. */
  steps(batch = TERM_SWEEP_BATCH): SweepStep[] {
    return [() => this.uow.run(() => this.releaseDue(batch)), () => this.uow.run(() => this.expireDue(batch))];
  }

  private async releaseDue(limit: number): Promise<number> {
    const due = byOrg(await this.rows.claimReleasable(this.clock.now(), limit));
    for (const d of due) {
      const locked = await this.rows.lock(d.id);
      if (locked) await this.release.releaseLocked({ kind: 'system', orgId: d.orgId }, locked, 'expired', null);
    }
    return due.length;
  }

  private async expireDue(limit: number): Promise<number> {
    const now = this.clock.now();
    const due = byOrg(await this.rows.claimExpired(now, limit));
    for (const d of due) {
      if (d.autoRenew.enabled && (await this.renewed(d))) continue;
      const releaseAt = new Date(now.getTime() + this.settings.volumeRetentionS * 1000);
      const r = await this.rows.lock(d.id);
      if (!r) continue;
      if (r.status === 'assigned') {
        await this.unassign.suspendLocked({ kind: 'system', orgId: d.orgId }, r, now, releaseAt);
        continue;
      }
      await this.rows.markSuspended(d.id, now, releaseAt);
      await this.audit.record({
        orgId: d.orgId, actorType: 'system', actorId: null, action: 'reserved_ip.suspend', targetId: d.id, ipAddress: null,
        data: { suspended_at: now.toISOString(), release_at: releaseAt.toISOString() },
      });
    }
    return due.length;
  }

  /** An automatic renewal in a savepoint: whether it was accepted (refused: nothing of it is left). */
  private async renewed(d: DueReservedIp): Promise<boolean> {
    try {
      await this.uow.savepoint(() => this.renewal.execute({ kind: 'system', orgId: d.orgId }, { id: d.id, termMonths: d.autoRenew.termMonths ?? d.termMonths, auto: true }, null));
      return true;
    } catch (err) {
      if (err instanceof DomainError) return false;
      throw err;
    }
  }
}
