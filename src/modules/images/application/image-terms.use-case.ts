import { Injectable } from '@nestjs/common';
import { Settings } from '../../../shared/config/settings';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { DomainError } from '../../../shared/kernel/errors/domain-error';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { DeleteImage, RenewImage } from './image.use-cases';
import { TERM_SWEEP_BATCH, byOrg } from '../../terms/application/expire-terms.use-case';
import { SweepStep, inRounds } from '../../terms/application/sweep-rounds';
import { DueImage, ImageRepository } from './images.port';

/**
 * The end of an image's term, run by the term sweep (terms.md, for images): an image
 * still `available` at `expires_at` with automatic renewal on is renewed then (RenewImage by
 * actor system, audited with `data.auto: true`); otherwise, or when the wallet cannot pay, it is
 * `suspended` (no server can be made from it) until `release_at` = now + VOLUME_RETENTION_S, when it
 * is deleted (image.delete by actor system, `deleted_reason: "expired"`). A renewal meanwhile
 * makes it available again. Each transition claims its rows FOR UPDATE SKIP LOCKED, one
 * transaction per batch, so several processes share the work and each row moves once; its steps
 * run in the term sweep's rounds beside the servers' and volumes' (inRounds).
 */
@Injectable()
export class ImageTerms {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly images: ImageRepository,
    private readonly renew: RenewImage,
    private readonly remove: DeleteImage,
    private readonly audit: AuditTrail,
    private readonly settings: Settings,
    private readonly clock: Clock,
  ) {}

  /** One sweep: how many images it renewed, suspended or released. */
  execute(stopping: () => boolean = () => false, batch = TERM_SWEEP_BATCH): Promise<number> {
    return inRounds([{ batch, steps: this.steps(batch) }], stopping);
  }

  /** Its transitions (release, then the end of the term), one batch each in a transaction: the term sweep's rounds (inRounds). */
  steps(batch = TERM_SWEEP_BATCH): SweepStep[] {
    return [() => this.uow.run(() => this.release(batch)), () => this.uow.run(() => this.expire(batch))];
  }

  private async release(limit: number): Promise<number> {
    const due = byOrg(await this.images.claimReleasable(this.clock.now(), limit));
    for (const d of due) {
      const s = await this.images.lock(d.id);
      if (s) await this.remove.deleteLocked({ kind: 'system', orgId: d.orgId }, s, 'expired', null);
    }
    return due.length;
  }

  private async expire(limit: number): Promise<number> {
    const now = this.clock.now();
    const due = byOrg(await this.images.claimExpired(now, limit));
    for (const d of due) {
      if (d.autoRenew.enabled && (await this.renewed(d))) continue;
      const releaseAt = new Date(now.getTime() + this.settings.volumeRetentionS * 1000);
      await this.images.markSuspended(d.id, now, releaseAt);
      await this.audit.record({
        orgId: d.orgId, actorType: 'system', actorId: null, action: 'image.suspend', targetId: d.id, ipAddress: null,
        data: { suspended_at: now.toISOString(), release_at: releaseAt.toISOString() },
      });
    }
    return due.length;
  }

  /** An automatic renewal in a savepoint: whether it was accepted (refused: nothing of it is left). */
  private async renewed(d: DueImage): Promise<boolean> {
    try {
      await this.uow.savepoint(() =>
        this.renew.execute({ kind: 'system', orgId: d.orgId }, { imageId: d.id, termMonths: d.autoRenew.termMonths ?? d.termMonths, auto: true }, null),
      );
      return true;
    } catch (err) {
      if (err instanceof DomainError) return false;
      throw err;
    }
  }
}
