import { assertNotSuspended } from '../../prepaid/domain/suspension';
import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { invalidRequest, invalidState, notFound } from '../../../shared/kernel/errors/domain-error';
import { newId } from '../../../shared/kernel/ids/ids';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { Principal } from '../../auth/domain/principal';
import { OperationRepository } from '../../operations/application/operations.port';
import { Operation, OperationStep, OperationType, JsonObject } from '../../operations/domain/operation';
import { Catalog } from '../../options/application/catalog.port';
import { Server } from '../domain/server';
import { Volume, assertDiskPresent } from '../domain/volume';
import {
  assertAttachable, assertDeletable, assertDetachable, attachSteps, checkMountPath, defaultMountPath, deleteSteps, detachSteps,
  operationInTheWay, serverBeingDeleted, serverFull,
} from '../domain/volume-actions';
import { auditActor } from '../../audit/application/audit-actor';
import { ProviderHealth } from '../../storage-provider/application/block-storage.port';
import { providerUnavailable } from './purchase-volume.use-case';
import { attachParams, deleteParams } from './volume-action-params';
import { ServerRepository, VolumeRepository } from './volumes.port';

export interface VolumeActionResult {
  volume: Volume;
  operation: Operation;
}

/**
 * What attach, detach and delete share: in one transaction, lock the volume (404), let the
 * action check the resources it names (404, 400), refuse a second unfinished operation (409
 * invalid_state naming it in details.operation_id), let it check the volume's status (409
 * invalid_state) and the rest (409 quota_exceeded), create the operation, write the audit
 * row; the provider's health last (503, the transaction rolled back: nothing reserved).
 */
@Injectable()
export class VolumeActionRunner {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly volumes: VolumeRepository,
    private readonly operations: OperationRepository,
    private readonly audit: AuditTrail,
    private readonly health: ProviderHealth,
    private readonly clock: Clock,
    private readonly servers: ServerRepository,
  ) {}

  run(
    principal: Principal,
    volumeId: string,
    ip: string | null,
    action: {
      type: OperationType;
      /** Checks of the other resources the action names, before any 409 (404, 400). */
      check?: (volume: Volume) => void | Promise<void>;
      /** The volume's status (409 invalid_state), after the unfinished-operation check. */
      checkState?: (volume: Volume) => void;
      /** The last checks (409 quota_exceeded); returns the operation's shape. */
      plan: (volume: Volume) => Promise<{ vmId: string | null; steps: OperationStep[]; params: JsonObject; audit: JsonObject }>;
      /** Detach and delete: refused (409 invalid_state, details.operation_id: its vm.delete) while the volume's server is `deleting`. */
      refuseOnDeletingServer?: boolean;
      /** Writes to the volume itself at acceptance (delete: `deleting`). */
      apply?: (volume: Volume) => Promise<void>;
    },
  ): Promise<VolumeActionResult> {
    return this.uow.run(async () => {
      const volume = await this.volumes.lockInOrg(principal.orgId, volumeId);
      if (!volume) throw notFound(`Volume ${volumeId} not found`);
      await action.check?.(volume);
      // An operation in the way is named first: a disk still `creating`, or with an attach in
      // flight, tells the caller which operation to wait for rather than its current status.
      const inTheWay = await this.operations.unfinishedForVolume(volume.id);
      if (inTheWay) throw operationInTheWay(volume.id, inTheWay);
      if (action.refuseOnDeletingServer && volume.server) {
        // servers.md "Disks": a `deleting` server's disks refuse detach and delete, naming its vm.delete.
        const deletion = await this.servers.deletion(volume.server.id);
        if (deletion) throw serverBeingDeleted(volume, deletion.operationId);
      }
      action.checkState?.(volume);
      const plan = await action.plan(volume);
      const operation = Operation.create({
        id: newId('op'),
        orgId: principal.orgId,
        type: action.type,
        vmId: plan.vmId,
        volumeId: volume.id,
        steps: plan.steps,
        params: plan.params,
        createdAt: this.clock.now(),
      });
      await this.operations.create(operation);
      await action.apply?.(volume);
      await this.audit.record({
        orgId: principal.orgId,
        ...auditActor(principal),
        action: action.type,
        targetId: volume.id,
        ipAddress: ip,
        data: { operation_id: operation.id, ...plan.audit },
      });
      if (this.health.isDown()) throw providerUnavailable();
      const after = action.apply ? (await this.volumes.findInOrg(principal.orgId, volume.id))! : volume;
      return { volume: after, operation };
    });
  }
}

/**
 * POST /v1/volumes/{id}/attach {server_id, mount_path?}: 404 volume or server; 400 server in
 * another zone; 409 invalid_state unless available and idle; 409 quota_exceeded when the server
 * has no free slot (counted under its row lock, with attaches and purchases in flight); 503.
 */
@Injectable()
export class AttachVolume {
  constructor(
    private readonly runner: VolumeActionRunner,
    private readonly servers: ServerRepository,
    private readonly catalog: Catalog,
  ) {}

  execute(principal: Principal, input: { volumeId: string; serverId: string; mountPath?: string }, ip: string | null): Promise<VolumeActionResult> {
    const requestedPath = input.mountPath === undefined ? undefined : checkMountPath(input.mountPath);
    let server: Server | undefined;
    return this.runner.run(principal, input.volumeId, ip, {
      type: 'volume.attach',
      check: async (volume) => {
        // The server is looked up (404, 400) before the volume's state is judged (409). Its row stays
        // locked until commit, so the slot count below holds.
        server = await this.servers.lockInOrg(principal.orgId, input.serverId);
        if (!server) throw notFound(`Server ${input.serverId} not found`);
        if (server.zoneId !== volume.zoneId) {
          throw invalidRequest(`server ${server.id} is in zone ${server.zoneId}; volume ${volume.id} is in ${volume.zoneId}`, { field: 'server_id' });
        }
        assertNotSuspended({ id: server.id, status: server.status ?? '' }, 'Server', 'attach a disk to it');
        if (server.status === 'creating' || server.status === 'deleting') {
          throw invalidState(`Server ${server.id} is ${server.status} and cannot take a disk`);
        }
      },
      checkState: (volume) => {
        assertAttachable(volume);
        assertDiskPresent(volume, 'attached');
      },
      plan: async (volume) => {
        if (!server) throw new Error('attach planned before its check');
        const offer = await this.catalog.offer(volume.regionId, volume.type);
        const limit = offer?.perServerLimit ?? 0;
        if ((await this.servers.slotsTaken(server.id)) >= limit) throw serverFull(server.id, limit);
        const mountPath = requestedPath ?? defaultMountPath(volume.name);
        return {
          vmId: server.id,
          steps: attachSteps(),
          params: attachParams.write({ serverId: server.id, mountPath }),
          audit: { server_id: server.id, mount_path: mountPath },
        };
      },
    });
  }
}

/** POST /v1/volumes/{id}/detach: 404; 409 invalid_state unless attached and idle; 503. */
@Injectable()
export class DetachVolume {
  constructor(private readonly runner: VolumeActionRunner) {}

  execute(principal: Principal, input: { volumeId: string }, ip: string | null): Promise<VolumeActionResult> {
    return this.runner.run(principal, input.volumeId, ip, {
      type: 'volume.detach',
      refuseOnDeletingServer: true,
      checkState: assertDetachable,
      plan: async (volume) => ({
        vmId: volume.server!.id,
        steps: detachSteps(),
        params: {},
        audit: { server_id: volume.server!.id, mount_path: volume.mountPath },
      }),
    });
  }
}

/**
 * DELETE /v1/volumes/{id}[?detach=true]: 404; 409 invalid_state when already deleting or
 * deleted, busy, protected, or attached without ?detach=true; the volume `deleting` at once;
 * 503. The prepaid term is not refunded.
 */
@Injectable()
export class DeleteVolume {
  constructor(
    private readonly runner: VolumeActionRunner,
    private readonly volumes: VolumeRepository,
  ) {}

  execute(principal: Principal, input: { volumeId: string; detach: boolean }, ip: string | null): Promise<VolumeActionResult> {
    return this.runner.run(principal, input.volumeId, ip, {
      type: 'volume.delete',
      refuseOnDeletingServer: true,
      checkState: (volume) => {
        if (volume.status === 'deleting' || volume.status === 'deleted' || volume.deletedAt) {
          throw invalidState(`Volume ${volume.id} is ${volume.status === 'deleting' ? 'already being deleted' : 'deleted'}`);
        }
      },
      plan: async (volume) => {
        const { detachFirst } = assertDeletable(volume, input.detach);
        return {
          vmId: volume.server?.id ?? null,
          steps: deleteSteps(detachFirst),
          params: deleteParams.write({ detach: detachFirst }),
          audit: { detach: detachFirst, server_id: volume.server?.id ?? null, size_gb: volume.sizeGb },
        };
      },
      apply: (volume) => this.volumes.markDeleting(volume.id),
    });
  }
}
