import { Inject, Injectable, Logger } from '@nestjs/common';
import { Clock } from '../../../shared/kernel/clock/clock';
import { UnitOfWork, WorkerUnitOfWork } from '../../../shared/database/unit-of-work';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { RECONCILE_SWEEP_PAGE, reconcileSettled } from '../../operations/application/reconcile-sweep';
import { Server } from '../domain/server';
import { ComputeGateway } from './compute-gateway';
import { ProviderInstance } from './compute-provider.port';
import { ServerReconcileStates, ServerStateChange } from './server-reconcile.port';

/** What the sweep does for one server, given its instance at the compute provider. */
export type ServerRepair = { kind: 'record'; change: ServerStateChange; reason: string } | { kind: 'report'; reason: string };

/**
 * The repair of a live server with no unfinished vm.* or template.* operation whose row differs
 * from its instance at the compute provider (`now` dates what it records). Forward-only: what the
 * instance shows is recorded, never undone at the provider, and an instance is never invented.
 *
 * - `creating` with no operation: reported only (its purchase's money is the operation's to settle).
 * - `deleting`: left to the deletion sweep (ReconcileDeletingServers), which settles it through the
 *   vm.delete executor from the same instance read (the deletion's firewall rules, disks, event).
 * - `starting`, `stopping`, `rebooting`: the status the instance's power shows.
 * - `running`, `stopped`: the status the instance's power shows when it differs.
 * - `suspended` (terms.md): never changed by the instance's power (the expiry sweep would suspend
 *   it again); a running instance behind it is reported.
 * - No instance: `instance_missing_since` is set once and reported (power actions
 *   and renewal answer 409 while it is); an instance seen again clears it.
 * - An instance whose ipv4 differs from the server's: reported (the address is never changed).
 * - vCPUs a failed plan change left reserved (its instance unreadable then): given back when the
 *   instance kept the server's vCPUs; reported when it did not.
 */
export function planServerRepair(server: Server, instance: ProviderInstance | null, now: Date): ServerRepair | undefined {
  if (server.deletedAt || server.status === 'deleted') return undefined;
  if (server.status === 'creating') {
    return { kind: 'report', reason: instance ? 'creating server has no unfinished operation but an instance at the provider' : 'creating server has no unfinished operation and no instance at the provider' };
  }
  if (server.status === 'deleting') return undefined;
  if (!instance) {
    if (server.instanceMissingSince) return { kind: 'report', reason: `${server.status} server has no instance at the provider` };
    return { kind: 'record', change: { instanceMissingSince: now }, reason: `${server.status} server has no instance at the provider` };
  }
  const change: ServerStateChange = {};
  const reasons: string[] = [];
  if (server.instanceMissingSince) {
    change.instanceMissingSince = null;
    reasons.push('the instance is at the provider again');
  }
  if (server.status === 'suspended') {
    // Its term ended: it stays suspended whatever the instance shows (only a renewal resumes it),
    // and an instance running behind it is reported (cli verify names it too), never recorded.
    if (reasons.length === 0 && instance.power === 'running') return { kind: 'report', reason: 'suspended server has a running instance at the provider' };
  } else if (server.status !== instance.power) {
    change.status = instance.power;
    reasons.push(`the instance is ${instance.power} at the provider`);
  }
  if ((server.resizeReservedVcpus ?? 0) > 0) {
    // A failed plan change whose instance could not be read then: given back when the instance kept the server's specs.
    if (instance.vcpus === server.vcpus) {
      change.resizeReservedVcpus = 0;
      reasons.push('the plan change did not take effect at the provider');
    } else if (reasons.length === 0) {
      return { kind: 'report', reason: `server has ${server.vcpus} vCPUs and ${server.resizeReservedVcpus} reserved but its instance has ${instance.vcpus}` };
    }
  }
  if (reasons.length > 0) return { kind: 'record', change, reason: reasons.join('; ') };
  if (instance.ipv4 !== server.ipv4) return { kind: 'report', reason: `server has ipv4 ${server.ipv4 ?? 'null'} but its instance has ${instance.ipv4}` };
  return undefined;
}

/**
 * The servers' twin of the volumes' reconciliation sweep: every RECONCILE_SWEEP_INTERVAL_MS the
 * worker processes compare each live server with no vm.* or template.* operation in flight with its
 * instance at the compute provider (ComputeGateway.getInstance) and repair what differs
 * (planServerRepair): a call whose answer was lost may have taken effect. Each change is audited
 * (`server.reconciled`, actor system, data {reason, from, to}). Holds no database connection while
 * it calls the provider; re-checks under the server's row lock that no operation started and the
 * status did not move meanwhile; skips a server whose instance cannot be read (the next sweep tries
 * again); stops between two servers once `stopping()` says so. Returns how many servers it repaired.
 */
@Injectable()
export class ReconcileServersWithProvider {
  private readonly logger = new Logger('ReconcileServers');

  constructor(
    private readonly compute: ComputeGateway,
    private readonly states: ServerReconcileStates,
    private readonly audit: AuditTrail,
    private readonly clock: Clock,
    @Inject(WorkerUnitOfWork) private readonly uow: UnitOfWork,
  ) {}

  execute(stopping: () => boolean = () => false, pageSize = RECONCILE_SWEEP_PAGE): Promise<number> {
    return reconcileSettled(
      {
        settledAfter: (after, limit) => this.states.settledAfter(after, limit),
        reconcile: (orgId, id) => this.reconcile(orgId, id),
        skipped: (id, err) =>
          this.logger.warn({ msg: 'could not reconcile a server with its instance; the next sweep tries again', server_id: id, err: err instanceof Error ? err.message : String(err) }),
      },
      stopping,
      pageSize,
    );
  }

  /** One server: read its instance (no transaction), then repair under the server's lock if it is still settled, in the same status, and still differs. */
  async reconcile(orgId: string, serverId: string): Promise<boolean> {
    // The status the instance is compared with; the repair is made only if it has not moved since.
    const before = await this.states.find(orgId, serverId);
    if (!before) return false;
    const instance = await this.compute.getInstance(serverId);
    const repair = await this.uow.run(async () => {
      const server = await this.states.lock(orgId, serverId);
      if (!server || server.status !== before.status || (await this.states.busy(serverId))) return undefined;
      const planned = planServerRepair(server, instance, this.clock.now());
      if (planned?.kind !== 'record') return planned;
      const { firewallRuleIds } = await this.states.apply(serverId, planned.change);
      await this.audit.record({
        orgId,
        actorType: 'system',
        actorId: null,
        action: 'server.reconciled',
        targetId: serverId,
        ipAddress: null,
        requestId: null,
        data: {
          reason: planned.reason,
          from: { status: server.status, instance_missing_since: server.instanceMissingSince?.toISOString() ?? null },
          to: changeData(planned.change, firewallRuleIds),
          instance: instance ? { instance_id: instance.instanceId, power: instance.power, ipv4: instance.ipv4 } : null,
        },
      });
      return planned;
    });
    if (!repair) return false;
    if (repair.kind === 'report') {
      this.logger.warn({ msg: 'server differs from its instance at the provider and cannot be repaired automatically', server_id: serverId, reason: repair.reason });
      return false;
    }
    this.logger.log({ msg: 'reconciled a server with its instance at the provider', server_id: serverId, reason: repair.reason });
    return true;
  }
}

function changeData(c: ServerStateChange, firewallRuleIds: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (c.deletedAt !== undefined) {
    out.status = 'deleted';
    out.deleted_at = c.deletedAt.toISOString();
    out.deleted_firewall_rule_ids = firewallRuleIds;
  }
  if (c.status !== undefined) out.status = c.status;
  if (c.instanceMissingSince !== undefined) out.instance_missing_since = c.instanceMissingSince?.toISOString() ?? null;
  if (c.resizeReservedVcpus !== undefined) out.resize_reserved_vcpus = c.resizeReservedVcpus;
  return out;
}
