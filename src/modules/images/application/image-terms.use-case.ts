import { Injectable } from '@nestjs/common';
import { Settings } from '../../../shared/config/settings';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { CopyTerms } from '../../terms/application/copy-terms';
import { ServerImage } from '../domain/image';
import { DeleteImage, RenewImage } from './image.use-cases';
import { DueImage, ImageRepository } from './images.port';

/** The end of a server image's term (CopyTerms): suspended, no server can be made from it; released, it is deleted (image.delete). */
@Injectable()
export class ImageTerms extends CopyTerms<DueImage, ServerImage> {
  constructor(rows: ImageRepository, renewal: RenewImage, deletion: DeleteImage, uow: UnitOfWork, audit: AuditTrail, settings: Settings, clock: Clock) {
    super(
      {
        kind: 'image',
        rows,
        deleteLocked: (system, locked, reason, ip) => deletion.deleteLocked(system, locked, reason, ip),
        renew: (system, due, termMonths) => renewal.execute(system, { imageId: due.id, termMonths, auto: true }, null),
      },
      uow, audit, settings, clock,
    );
  }
}
