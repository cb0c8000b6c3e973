import { TemplateDeployments } from '../../templates/application/deployments.port';
import { Injectable, OnModuleInit } from '@nestjs/common';
import { Clock } from '../../../shared/kernel/clock/clock';
import { invalidState } from '../../../shared/kernel/errors/domain-error';
import { ServerAccess } from '../../access/application/server-access';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { OperationExecutor, OperationExecutors, OperationStepExecutor } from '../../operations/application/operation-executors';
import { ProviderTruth, readProviderTruth } from '../../operations/application/provider-truth';
import { Operation } from '../../operations/domain/operation';
import { ProviderDisk } from '../../storage-provider/application/block-storage.port';
import { ProviderGateway } from '../../storage-provider/application/provider-gateway';
import { EventOutbox } from '../../webhooks/application/event-outbox.port';
import { presentServer } from '../domain/server-json';
import { ComputeGateway } from './compute-gateway';
import { ProviderInstance } from './compute-provider.port';
import { DeleteServerParams, deleteServerParams } from './delete-server-params';
import { DetachedDisk, ServerDeletions } from './server-deletions.port';
import { ServerReads } from './servers.port';

/** The provider's idempotency key of a call: `<operation id>/<step>` (and the disk's own call within the step). */
const key = (op: Operation, step: string): string => `${op.id}/${step}`;

/** What `observe` reads before a failed vm.delete gives anything back: the instance and each disk of the params. */
export interface DeletionTruth {
  instance: ProviderTruth<ProviderInstance | null>;
  disks: { volumeId: string; disk: ProviderTruth<ProviderDisk | null> }[];
}

/**
 * vm.delete (servers.md "Power, renewal, deletion" and "The compute provider and the operations"):
 *
 * - `detaching_volumes` (only with disks): each disk on the server at acceptance is unmounted
 *   and detached at the storage provider (ProviderGateway; keys `<op>/detaching_volumes/unmount`
 *   and `<op>/detaching_volumes/detach`, per disk as the provider keys calls by volume), then, in
 *   the step's transaction, each volume is left `available` (server, mount path null, not
 *   mounted; its data and term kept), audited `volume.detach` by the deleter with
 *   `data.reason: "server_deleted"`. A refused unmount is final: never a forced detach.
 * - `deleting_instance`: the instance is deleted at the compute provider (ComputeGateway), then
 *   the server is `deleted` with deleted_at (the row's triggers clear its ipv4 and give its vCPUs
 *   back; its reserved address, if any, is left `available`, audited `reserved_ip.unassign` by
 *   actor system with `data.reason: "server_deleted"`), its own firewall rules deleted (each audited firewall_rule.delete, reason
 *   server_deleted), the event server.deleted (the Server as GET returns it). No refund.
 *
 * Provider calls run outside any transaction; the worker retries a step whose provider is
 * unavailable with backoff, and fails the operation once the retry window closes.
 */
@Injectable()
export class DeleteServerExecutor implements OperationExecutor, OnModuleInit {
  readonly type = 'vm.delete' as const;
  readonly steps: readonly OperationStepExecutor[] = [
    {
      name: 'detaching_volumes',
      perform: async (op) => {
        const p = this.params(op);
        for (const disk of p.disks) {
          await this.storage.unmountDisk({ volumeId: disk.volumeId, step: key(op, 'detaching_volumes/unmount') });
          await this.storage.detachDisk({ volumeId: disk.volumeId, step: key(op, 'detaching_volumes/detach') });
        }
        return { detached: p.disks.map((d) => d.volumeId) };
      },
      commit: async (op) => {
        const p = this.params(op);
        await this.recordDetached(op, p, p.disks.map((d) => d.volumeId));
      },
    },
    {
      name: 'deleting_instance',
      perform: async (op) => {
        await this.compute.deleteInstance({ serverId: this.serverId(op), step: key(op, 'deleting_instance') });
        return {};
      },
      commit: async (op) => {
        const deletedAt = await this.concludeDeleted(op);
        return {
          server_id: this.serverId(op),
          detached_volume_ids: this.params(op).disks.map((d) => d.volumeId),
          deleted_at: deletedAt.toISOString(),
        };
      },
    },
  ];

  constructor(
    private readonly executors: OperationExecutors,
    private readonly deletions: ServerDeletions,
    private readonly reads: ServerReads,
    private readonly storage: ProviderGateway,
    private readonly compute: ComputeGateway,
    private readonly access: ServerAccess,
    private readonly audit: AuditTrail,
    private readonly outbox: EventOutbox,
    private readonly clock: Clock,
    private readonly deployments: TemplateDeployments,
  ) {}

  onModuleInit(): void {
    this.executors.register(this);
  }

  private serverId(op: Operation): string {
    const id = op.snapshot().vmId;
    if (!id) throw invalidState(`Operation ${op.id} names no server`);
    return id;
  }

  private params(op: Operation): DeleteServerParams {
    return deleteServerParams.read(op.params);
  }

  /** The volumes of `volumeIds` still on the server: `available`, each audited volume.detach by the deleter. */
  private async recordDetached(op: Operation, p: DeleteServerParams, volumeIds: string[]): Promise<DetachedDisk[]> {
    const serverId = this.serverId(op);
    const detached = await this.deletions.detachDisks(serverId, volumeIds);
    for (const disk of detached) {
      await this.audit.record({
        orgId: op.orgId,
        actorType: p.actor.type,
        actorId: p.actor.id,
        ipAddress: p.actor.ip,
        requestId: null,
        action: 'volume.detach',
        targetId: disk.volumeId,
        data: { operation_id: op.id, server_id: serverId, mount_path: disk.mountPath, reason: 'server_deleted' },
      });
    }
    return detached;
  }

  /**
   * The deletion took effect at the provider: the server `deleted` (once), its own firewall rules
   * deleted and audited, its deployments `removed`, the event server.deleted. Its deleted_at.
   */
  private async concludeDeleted(op: Operation): Promise<Date> {
    const serverId = this.serverId(op);
    const p = this.params(op);
    await this.writesLock(op);
    const reserved = await this.deletions.lockReservedIp(serverId);
    if (await this.deletions.markDeleted(serverId, this.clock.now())) {
      // The row's trigger left its reserved address `available`: the service unassigned it (actor system, as the term sweep's changes).
      if (reserved) {
        await this.audit.record({
          orgId: op.orgId, actorType: 'system', actorId: null, ipAddress: null, requestId: null, action: 'reserved_ip.unassign', targetId: reserved.id,
          data: { operation_id: op.id, ip: reserved.ip, server_id: serverId, reason: 'server_deleted' },
        });
      }
      await this.access.deleteServerRules(op.orgId, serverId, p.actor);
      await this.deployments.removeAllForServer(serverId);
      const server = (await this.reads.findInOrg(op.orgId, serverId))!;
      await this.outbox.record({ orgId: op.orgId, type: 'server.deleted', createdAt: server.deletedAt ?? this.clock.now(), data: presentServer(server) });
    }
    const server = await this.reads.findInOrg(op.orgId, serverId);
    if (!server?.deletedAt) throw invalidState(`Server ${serverId} could not be marked deleted`);
    return server.deletedAt;
  }

  /** Locks the server's row for the step's transaction (volumes, when any, were locked before it). */
  private async writesLock(op: Operation): Promise<void> {
    await this.deletions.lockServer(this.serverId(op));
  }

  /** The provider's truth about the instance and each disk, read before a failed deletion gives anything back. */
  async observe(op: Operation): Promise<ProviderTruth<DeletionTruth>> {
    const serverId = this.serverId(op);
    const disks = [];
    for (const d of this.params(op).disks) disks.push({ volumeId: d.volumeId, disk: await readProviderTruth(() => this.storage.getDisk(d.volumeId)) });
    const instance = await readProviderTruth<ProviderInstance | null>(() => this.compute.getInstance(serverId));
    return { known: true, value: { instance, disks } };
  }

  /**
   * A failed deletion, concluded from what the providers hold (never "nothing happened"):
   *
   * - each disk detached at the storage provider stays detached: its volume `available`, audited
   *   volume.detach (reason server_deleted); one still attached keeps its server, mounted as the
   *   provider says; one that cannot be read stays as recorded (the volumes' reconciliation
   *   sweep settles it once the provider answers);
   * - the instance gone at the compute provider: the deletion took effect (the server `deleted`
   *   as on success, though the operation failed); still there: the server regains its former
   *   status; unreadable after `deleting_instance` was tried: the server stays `deleting`, left to
   *   the reconciliation sweep (ReconcileDeletingServers), which reads the instance again later. A failure before `deleting_instance` never touched
   *   the instance: the former status comes back whatever the read says.
   */
  async failed(op: Operation, _error: unknown, truth?: ProviderTruth<unknown>): Promise<void> {
    const serverId = this.serverId(op);
    const p = this.params(op);
    const seen = truth?.known ? (truth.value as DeletionTruth) : undefined;
    const detachedThere: string[] = [];
    for (const d of seen?.disks ?? []) {
      if (!d.disk.known || d.disk.value === null) continue;
      if (d.disk.value.serverId === null) detachedThere.push(d.volumeId);
      else if (d.disk.value.serverId === serverId) await this.deletions.setMounted(serverId, d.volumeId, d.disk.value.mounted);
    }
    if (detachedThere.length > 0) await this.recordDetached(op, p, detachedThere);

    const server = await this.reads.findInOrg(op.orgId, serverId);
    if (!server || server.deletedAt || server.status !== 'deleting') return;
    const instanceTried = op.snapshot().steps.some((s) => s.name === 'deleting_instance' && s.status !== 'pending');
    if (!instanceTried) {
      await this.deletions.restoreStatus(serverId, p.formerStatus);
      return;
    }
    const instance = seen?.instance;
    if (!instance?.known) return;
    await this.settleFromInstance(op, instance.value);
  }

  /**
   * A `deleting` server whose vm.delete `op` has ended without settling it, given its instance at
   * the compute provider: gone, the deletion took effect (deleted as on success); still there,
   * the former status comes back. What it did. Runs in the caller's transaction.
   */
  async settleFromInstance(op: Operation, instance: ProviderInstance | null): Promise<'deleted' | 'restored'> {
    if (instance === null) {
      await this.concludeDeleted(op);
      return 'deleted';
    }
    await this.deletions.restoreStatus(this.serverId(op), this.params(op).formerStatus);
    return 'restored';
  }
}
