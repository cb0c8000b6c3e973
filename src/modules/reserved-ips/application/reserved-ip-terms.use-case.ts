import { Injectable } from '@nestjs/common';
import { Settings } from '../../../shared/config/settings';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { CopyTerms } from '../../terms/application/copy-terms';
import { ReservedIp } from '../domain/reserved-ip';
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
export class ReservedIpTerms extends CopyTerms<DueReservedIp, ReservedIp> {
  /** CopyTerms' sweep; an assigned reservation is suspended through its unassignment, one its lock no longer finds is left. */
  constructor(
    rows: ReservedIpRepository, renewal: RenewIp, unassign: UnassignIp, release: ReleaseIp,
    uow: UnitOfWork, audit: AuditTrail, settings: Settings, clock: Clock,
  ) {
    super(
      {
        kind: 'reserved_ip',
        rows,
        deleteLocked: (system, locked, reason, ip) => release.releaseLocked(system, locked, reason, ip),
        renew: (system, due, termMonths) => renewal.execute(system, { id: due.id, termMonths, auto: true }, null),
        suspend: async (system, due, at, releaseAt) => {
          const r = await rows.lock(due.id);
          if (!r) return true;
          if (r.status !== 'assigned') return false;
          await unassign.suspendLocked(system, r, at, releaseAt);
          return true;
        },
      },
      uow, audit, settings, clock,
    );
  }
}
