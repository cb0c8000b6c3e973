import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { DomainError, invalidState, notFound } from '../../../shared/kernel/errors/domain-error';
import { newId } from '../../../shared/kernel/ids/ids';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { actorOf } from '../../auth/application/api-keys.use-cases';
import { Principal } from '../../auth/domain/principal';
import { OperationRepository } from '../../operations/application/operations.port';
import { Operation, OperationStep } from '../../operations/domain/operation';
import { auditActor } from '../../audit/application/audit-actor';
import { ProviderHealth } from '../../storage-provider/application/block-storage.port';
import { Server } from '../domain/server';
import { ComputeHealth } from './compute-provider.port';
import { deleteServerParams } from './delete-server-params';
import { ServerDeletions } from './server-deletions.port';
import { ServerReads, ServerWrites } from './servers.port';

export interface DeleteServerResult {
  server: Server;
  operation: Operation;
}

/** 409 invalid_state naming the unfinished operation in the way (servers.md "Precisions": always with details.operation_id). */
export const serverOperationInTheWay = (serverId: string, operationId: string): DomainError =>
  new DomainError('invalid_state', `Server ${serverId} has an operation pending or running (${operationId}); wait for it to end`, { operation_id: operationId });

export const computeUnavailable = (): DomainError =>
  new DomainError('provider_unavailable', 'The compute provider is unavailable; nothing was recorded. Retry later');

export const storageUnavailableForDisks = (): DomainError =>
  new DomainError('provider_unavailable', "The storage provider is unavailable and the server's disks must be detached first; nothing was recorded. Retry later");

/** vm.delete's steps: detaching_volumes only when disks are on the server, then deleting_instance. */
export const deleteServerSteps = (withDisks: boolean): OperationStep[] => [
  ...(withDisks ? [{ name: 'detaching_volumes', status: 'pending' as const }] : []),
  { name: 'deleting_instance', status: 'pending' },
];

/**
 * DELETE /v1/servers/{id} (servers.md "Power, renewal, deletion"): in one transaction, lock the
 * server (404 when it is not the organization's), then 409 invalid_state in this order: an
 * unfinished operation naming it (vm.*, template.*, and volume operations with it; details.operation_id,
 * checked before the status rule), deleted or `deleting`, delete_protection on, any status but
 * running or stopped; then the vm.delete operation (params: the former status, the deleter, the
 * disks on it), `deleting` at once, the audit row server.delete. Last, 503 provider_unavailable
 * when the compute provider's circuit is open, or, for a server with disks, the storage
 * provider's: thrown inside the transaction, so nothing is recorded. No refund.
 */
@Injectable()
export class DeleteServer {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly reads: ServerReads,
    private readonly writes: ServerWrites,
    private readonly deletions: ServerDeletions,
    private readonly operations: OperationRepository,
    private readonly audit: AuditTrail,
    private readonly compute: ComputeHealth,
    private readonly storage: ProviderHealth,
    private readonly clock: Clock,
  ) {}

  execute(principal: Principal, serverId: string, ip: string | null): Promise<DeleteServerResult> {
    return this.uow.run(async () => {
      const server = await this.writes.lockInOrg(principal.orgId, serverId);
      if (!server) throw notFound(`Server ${serverId} not found`);
      const inTheWay = await this.deletions.unfinishedOperation(server.id);
      if (inTheWay) throw serverOperationInTheWay(server.id, inTheWay);
      if (server.deletedAt || server.status === 'deleted') throw invalidState(`Server ${server.id} is deleted`);
      if (server.status === 'deleting') throw invalidState(`Server ${server.id} is already being deleted`);
      if (server.deleteProtection) throw invalidState(`Server ${server.id} has delete_protection on; turn it off (PATCH) before deleting it`);
      if (server.status !== 'running' && server.status !== 'stopped' && server.status !== 'suspended') {
        throw invalidState(`Server ${server.id} is ${server.status}; only a running, stopped or suspended server can be deleted`);
      }

      const disks = await this.deletions.attachedDisks(server.id);
      const actor = actorOf(principal, ip);
      const operation = Operation.create({
        id: newId('op'),
        orgId: principal.orgId,
        type: 'vm.delete',
        vmId: server.id,
        steps: deleteServerSteps(disks.length > 0),
        params: deleteServerParams.write({ formerStatus: server.status, actor, disks }),
        createdAt: this.clock.now(),
      });
      try {
        // The index operations_one_unfinished_server_op is the last word between racing requests.
        await this.uow.savepoint(() => this.operations.create(operation));
      } catch (err) {
        if (!(err instanceof DomainError) || err.code !== 'invalid_state') throw err;
        const other = await this.deletions.unfinishedOperation(server.id);
        throw other ? serverOperationInTheWay(server.id, other) : err;
      }
      await this.deletions.markDeleting(server.id);
      await this.audit.record({
        orgId: principal.orgId,
        ...auditActor(principal),
        action: 'server.delete',
        targetId: server.id,
        ipAddress: ip,
        data: { operation_id: operation.id, volume_ids: disks.map((d) => d.volumeId) },
      });
      if (this.compute.isDown()) throw computeUnavailable();
      if (disks.length > 0 && this.storage.isDown()) throw storageUnavailableForDisks();
      return { server: (await this.reads.findInOrg(principal.orgId, server.id))!, operation };
    });
  }

  /**
   * The release of a suspended server whose retention ended (terms.md "Release"): the same
   * vm.delete by actor system (`data.reason: "expired"`), its disks detached and kept,
   * `deleted_reason: "expired"`; delete_protection does not stop it, and no 503 (the worker
   * retries the provider). Runs in the caller's transaction, which holds the server's row; false
   * when the server is not suspended or has an unfinished operation (nothing written).
   */
  release(orgId: string, serverId: string): Promise<Operation | undefined> {
    return this.uow.run(async () => {
      const server = await this.writes.lockInOrg(orgId, serverId);
      if (!server || server.deletedAt || server.status !== 'suspended') return undefined;
      if (await this.deletions.unfinishedOperation(server.id)) return undefined;
      const disks = await this.deletions.attachedDisks(server.id);
      const operation = Operation.create({
        id: newId('op'),
        orgId,
        type: 'vm.delete',
        vmId: server.id,
        steps: deleteServerSteps(disks.length > 0),
        params: deleteServerParams.write({ formerStatus: 'suspended', actor: { type: 'system', id: null, ip: null }, disks }),
        createdAt: this.clock.now(),
      });
      await this.operations.create(operation);
      await this.deletions.markDeleting(server.id, 'expired');
      await this.audit.record({
        orgId,
        actorType: 'system',
        actorId: null,
        action: 'server.delete',
        targetId: server.id,
        ipAddress: null,
        data: { operation_id: operation.id, volume_ids: disks.map((d) => d.volumeId), reason: 'expired' },
      });
      return operation;
    });
  }
}
