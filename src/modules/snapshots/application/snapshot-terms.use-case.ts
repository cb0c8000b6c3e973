import { Injectable } from '@nestjs/common';
import { Settings } from '../../../shared/config/settings';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { SystemActor } from '../../audit/application/audit-actor';
import { TermMonths } from '../../prepaid/domain/term';
import { CopyTerms } from '../../terms/application/copy-terms';
import { DeleteSnapshot, RenewSnapshot } from './snapshot.use-cases';
import { DueSnapshot, SnapshotRepository } from './snapshots.port';

/**
 * The end of a snapshot's term (CopyTerms): suspended, it cannot be restored from; released, it
 * is deleted (snapshot.delete).
 */
@Injectable()
export class SnapshotTerms extends CopyTerms<DueSnapshot> {
  protected readonly kind = 'snapshot';

  constructor(
    uow: UnitOfWork,
    audit: AuditTrail,
    settings: Settings,
    clock: Clock,
    private readonly snapshots: SnapshotRepository,
    private readonly renewal: RenewSnapshot,
    private readonly deletion: DeleteSnapshot,
  ) {
    super(uow, audit, settings, clock);
  }

  protected claimReleasable(now: Date, limit: number): Promise<DueSnapshot[]> {
    return this.snapshots.claimReleasable(now, limit);
  }

  protected claimExpired(now: Date, limit: number): Promise<DueSnapshot[]> {
    return this.snapshots.claimExpired(now, limit);
  }

  protected async release(system: SystemActor, due: DueSnapshot): Promise<void> {
    const s = await this.snapshots.lock(due.id);
    if (s) await this.deletion.deleteLocked(system, s, 'expired', null);
  }

  protected markSuspended(id: string, at: Date, releaseAt: Date): Promise<void> {
    return this.snapshots.markSuspended(id, at, releaseAt);
  }

  protected async renew(system: SystemActor, due: DueSnapshot, termMonths: TermMonths): Promise<void> {
    await this.renewal.execute(system, { snapshotId: due.id, termMonths, auto: true }, null);
  }
}
