import { Injectable } from '@nestjs/common';
import { Settings } from '../../../shared/config/settings';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { CopyTerms } from '../../terms/application/copy-terms';
import { Snapshot } from '../domain/snapshot';
import { DeleteSnapshot, RenewSnapshot } from './snapshot.use-cases';
import { DueSnapshot, SnapshotRepository } from './snapshots.port';

/** The end of a snapshot's term (CopyTerms): suspended, it cannot be restored from; released, it is deleted (snapshot.delete). */
@Injectable()
export class SnapshotTerms extends CopyTerms<DueSnapshot, Snapshot> {
  constructor(rows: SnapshotRepository, renewal: RenewSnapshot, deletion: DeleteSnapshot, uow: UnitOfWork, audit: AuditTrail, settings: Settings, clock: Clock) {
    super(
      {
        kind: 'snapshot',
        rows,
        deleteLocked: (system, locked, reason, ip) => deletion.deleteLocked(system, locked, reason, ip),
        renew: (system, due, termMonths) => renewal.execute(system, { snapshotId: due.id, termMonths, auto: true }, null),
      },
      uow, audit, settings, clock,
    );
  }
}
