import { Inject, Injectable, Logger } from '@nestjs/common';
import { UnitOfWork, WorkerUnitOfWork } from '../../../shared/database/unit-of-work';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { RECONCILE_SWEEP_PAGE, reconcileSettled } from '../../operations/application/reconcile-sweep';
import { ComputeGateway } from '../../servers/application/compute-gateway';
import { ReservedIpRepository } from './reserved-ips.port';

/**
 * The reservations' reconciliation sweep (beside the servers' and volumes'): every settled
 * reservation (no operation in flight) whose assignment in the database differs from the compute
 * provider's is repaired, the provider winning (an assignment whose answer was lost took effect
 * there): routed to a live server of the organization in its region that holds no other reserved
 * address, it is `assigned` to it; routed to nothing, it is `available`; routed elsewhere (a
 * server deleted, another organization's), it is routed to nothing at the provider. Each repair is
 * audited `reserved_ip.reconcile` by `system`. The provider is read again just before a repair
 * (outside any transaction), and the row re-checked under its lock, so an operation that ran
 * meanwhile is never undone. Addresses the provider routes for released reservations are routed
 * to nothing.
 */
@Injectable()
export class ReconcileReservedIps {
  private readonly log = new Logger('ReconcileReservedIps');

  constructor(
    private readonly rows: ReservedIpRepository,
    private readonly compute: ComputeGateway,
    @Inject(WorkerUnitOfWork) private readonly uow: UnitOfWork,
    private readonly audit: AuditTrail,
  ) {}

  /** How many reservations it repaired. */
  async execute(stopping: () => boolean = () => false): Promise<number> {
    const routed = new Map((await this.compute.listAssignedAddresses()).map((a) => [a.addressId, a.serverId]));
    const seen = new Set<string>();
    const repaired = await reconcileSettled(
      {
        settledAfter: async (after, limit) => {
          const page = await this.uow.run(() => this.rows.settledAfter(after, limit));
          for (const r of page) seen.add(r.id);
          return page.map((r) => ({ ...r, id: r.id }));
        },
        reconcile: (orgId, id) => this.reconcile(orgId, id, routed.get(id) ?? null),
        skipped: (id, err) => this.log.warn(`Reserved IP ${id} not reconciled: ${err instanceof Error ? err.message : String(err)}`),
      },
      stopping,
      RECONCILE_SWEEP_PAGE,
    );
    // Routed at the provider, but no live reservation here (released, or failed purchases whose compensation was lost).
    let stray = 0;
    for (const [addressId] of routed) {
      if (stopping()) break;
      if (seen.has(addressId)) continue;
      const live = await this.uow.run(() => this.rows.lock(addressId));
      if (live && live.status !== 'released') continue;
      try {
        await this.compute.unassignAddress({ addressId, step: 'reconcile/released', ip: live?.ip ?? '0.0.0.0' });
        stray += 1;
      } catch (err) {
        this.log.warn(`Address ${addressId} left routed: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    return repaired + stray;
  }

  private async reconcile(orgId: string, id: string, listed: string | null): Promise<boolean> {
    const before = await this.uow.run(() => this.rows.findInOrg(orgId, id));
    if (!before || before.operationId || before.status === 'released' || before.serverId === listed) return false;
    // Read again now: the list may be older than an operation that ended since.
    const now = await this.compute.getAddress(id);
    const there = now?.serverId ?? null;
    if (there === before.serverId) return false;
    let unroute = false;
    const repaired = await this.uow.run(async () => {
      const r = await this.rows.lock(id);
      if (!r || r.operationId || r.status === 'released' || r.serverId !== before.serverId) return false;
      let to: string | null = null;
      if (there !== null) {
        const server = await this.rows.lockServer(orgId, there);
        const holder = await this.rows.holdingServer(there);
        const valid = server && server.status !== 'deleted' && server.regionId === r.regionId && r.status !== 'suspended' && (!holder || holder === r.id);
        if (valid) to = there;
        else unroute = true;
      }
      if (to !== null) await this.rows.markAssigned(r.id, to);
      else if (r.serverId !== null) await this.rows.markUnassigned(r.id);
      else return false;
      await this.audit.record({
        orgId, actorType: 'system', actorId: null, action: 'reserved_ip.reconcile', targetId: r.id, ipAddress: null,
        data: { ip: r.ip, server_id: { old: r.serverId, new: to }, reason: to ? `routed to server ${to} at the compute provider` : 'routed to no server at the compute provider' },
      });
      return true;
    });
    if (unroute) await this.compute.unassignAddress({ addressId: id, step: `reconcile/${there}`, ip: before.ip });
    return repaired || unroute;
  }
}
