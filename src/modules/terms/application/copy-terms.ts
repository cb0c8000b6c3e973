import { Settings } from '../../../shared/config/settings';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { DomainError } from '../../../shared/kernel/errors/domain-error';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { SystemActor } from '../../audit/application/audit-actor';
import { TermMonths } from '../../prepaid/domain/term';
import { TERM_SWEEP_BATCH, byOrg } from './expire-terms.use-case';
import { SweepStep, inRounds } from './sweep-rounds';

/** A prepaid copy (a disk's snapshot, a server's image) whose deadline has come, claimed (row locked FOR UPDATE SKIP LOCKED) by a term sweep. */
export interface DueCopy {
  id: string;
  orgId: string;
  expiresAt: Date;
  termMonths: TermMonths;
  autoRenew: { enabled: boolean; termMonths: TermMonths | null };
}

/** How the term sweep reaches one kind of prepaid copy: its rows, its deletion and its renewal use cases. */
export interface CopyKind<D extends DueCopy, L> {
  /** The audit target kind: `<kind>.suspend` is the suspension's audit action. */
  kind: string;
  rows: {
    claimReleasable(now: Date, limit: number): Promise<D[]>;
    claimExpired(now: Date, limit: number): Promise<D[]>;
    lock(id: string): Promise<L | undefined>;
    markSuspended(id: string, at: Date, releaseAt: Date): Promise<void>;
  };
  /** The deletion of a locked copy, by `system`, reason `expired`. */
  deleteLocked(system: SystemActor, locked: L, reason: 'expired', ip: null): Promise<unknown>;
  /** The renewal use case for `termMonths`, by `system`, `auto`. */
  renew(system: SystemActor, due: D, termMonths: TermMonths): Promise<unknown>;
  /**
   * The kind's own suspension of a due copy not renewed, if it has one: true when it took care of
   * it (suspended and audited it itself, or left it to the next sweep), false for the plain one
   * (markSuspended, audited `<kind>.suspend`).
   */
  suspend?(system: SystemActor, due: D, at: Date, releaseAt: Date): Promise<boolean>;
}

/**
 * The end of a prepaid copy's term, run by the term sweep (terms.md, for snapshots and server
 * images): a copy still `available` at `expires_at` with automatic renewal on is renewed then (its
 * renewal use case by actor system, audited with `data.auto: true`); otherwise, or when the wallet
 * cannot pay, it is `suspended` (nothing can be made from it) until `release_at` = now +
 * VOLUME_RETENTION_S, when it is deleted (its deletion by actor system, `deleted_reason:
 * "expired"`). A renewal meanwhile makes it available again. Each transition claims its rows FOR
 * UPDATE SKIP LOCKED, one transaction per batch, so several processes share the work and each row
 * moves once; its steps run in the term sweep's rounds beside the servers' and volumes' (inRounds).
 * A kind of copy gives its CopyKind; the sweep is this class's.
 */
export class CopyTerms<D extends DueCopy, L> {
  constructor(
    private readonly of: CopyKind<D, L>,
    private readonly uow: UnitOfWork,
    private readonly audit: AuditTrail,
    private readonly settings: Settings,
    private readonly clock: Clock,
  ) {}

  /** One sweep: how many copies it renewed, suspended or released. */
  execute(stopping: () => boolean = () => false, batch = TERM_SWEEP_BATCH): Promise<number> {
    return inRounds([{ batch, steps: this.steps(batch) }], stopping);
  }

  /** Its transitions (release, then the end of the term), one batch each in a transaction: the term sweep's rounds (inRounds). */
  steps(batch = TERM_SWEEP_BATCH): SweepStep[] {
    return [() => this.uow.run(() => this.releaseDue(batch)), () => this.uow.run(() => this.expireDue(batch))];
  }

  private async releaseDue(limit: number): Promise<number> {
    const due = byOrg(await this.of.rows.claimReleasable(this.clock.now(), limit));
    for (const d of due) {
      const locked = await this.of.rows.lock(d.id);
      if (locked) await this.of.deleteLocked({ kind: 'system', orgId: d.orgId }, locked, 'expired', null);
    }
    return due.length;
  }

  private async expireDue(limit: number): Promise<number> {
    const now = this.clock.now();
    const due = byOrg(await this.of.rows.claimExpired(now, limit));
    for (const d of due) {
      if (d.autoRenew.enabled && (await this.renewed(d))) continue;
      const releaseAt = new Date(now.getTime() + this.settings.volumeRetentionS * 1000);
      if (this.of.suspend && (await this.of.suspend({ kind: 'system', orgId: d.orgId }, d, now, releaseAt))) continue;
      await this.of.rows.markSuspended(d.id, now, releaseAt);
      await this.audit.record({
        orgId: d.orgId, actorType: 'system', actorId: null, action: `${this.of.kind}.suspend`, targetId: d.id, ipAddress: null,
        data: { suspended_at: now.toISOString(), release_at: releaseAt.toISOString() },
      });
    }
    return due.length;
  }

  /** An automatic renewal in a savepoint: whether it was accepted (refused: nothing of it is left). */
  private async renewed(d: D): Promise<boolean> {
    try {
      await this.uow.savepoint(() => this.of.renew({ kind: 'system', orgId: d.orgId }, d, d.autoRenew.termMonths ?? d.termMonths));
      return true;
    } catch (err) {
      if (err instanceof DomainError) return false;
      throw err;
    }
  }
}
