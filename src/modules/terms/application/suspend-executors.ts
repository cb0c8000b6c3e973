import { Injectable, OnModuleInit } from '@nestjs/common';
import { DomainError, invalidState } from '../../../shared/kernel/errors/domain-error';
import { OperationExecutor, OperationExecutors, OperationStepExecutor } from '../../operations/application/operation-executors';
import { JsonObject, Operation } from '../../operations/domain/operation';
import { ComputeGateway } from '../../servers/application/compute-gateway';
import { ProviderGateway } from '../../storage-provider/application/provider-gateway';
import { suspendParams, suspendVolumeResult } from '../domain/suspension';
import { TermStore } from './term-store.port';

/** The provider's idempotency key of a step's call: `<operation id>/<step>[/<part>]`. */
const key = (op: Operation, step: string): string => `${op.id}/${step}`;

const serverIdOf = (op: Operation): string => {
  const id = op.snapshot().vmId;
  if (!id) throw invalidState(`Operation ${op.id} names no server`);
  return id;
};
const volumeIdOf = (op: Operation): string => {
  if (!op.volumeId) throw invalidState(`Operation ${op.id} names no volume`);
  return op.volumeId;
};

/**
 * vm.suspend (terms.md "Expiry: suspension"): one step, `powering_off`. The server is `suspended`
 * from acceptance; the guest gets an ACPI shutdown (the provider gives it 120 s), and when it
 * does not halt the power is cut. An instance already off (or gone) needs nothing. The call is
 * idempotent by its key, so a step run again after a lost answer asks the provider again, which
 * answers what it holds (the step reads the instance first: the provider's truth decides what is
 * left to do); the step is retried while the provider is unavailable. Result
 * `{server_id, suspended_at, release_at, power_before}`. A failure leaves the server suspended
 * whatever the provider holds (a suspended server is resumed only by a renewal; `cli verify`
 * reports one whose instance still runs). It has no failure hook, so the worker runs its
 * operations in its batches: their steps started in the batch's transaction, the instances
 * powered off side by side, the steps committed together (commitMany).
 */
@Injectable()
export class SuspendServerExecutor implements OperationExecutor, OnModuleInit {
  readonly type = 'vm.suspend' as const;
  readonly steps: readonly OperationStepExecutor[] = [
    {
      name: 'powering_off',
      perform: async (op) => {
        const serverId = serverIdOf(op);
        const instance = await this.compute.getInstance(serverId);
        if (!instance || instance.power !== 'running') return {};
        try {
          await this.compute.shutdown({ serverId, step: key(op, 'powering_off/acpi') });
        } catch (err) {
          // A guest that ignores ACPI (invalid_state): the power is cut.
          if (!(err instanceof DomainError) || err.code !== 'invalid_state') throw err;
          await this.compute.powerOff({ serverId, step: key(op, 'powering_off') });
        }
        return {};
      },
      commit: async (op) => {
        await this.store.lockServer(serverIdOf(op));
        return this.result(op);
      },
      // commit() of a batch (the worker powers their instances off side by side, then commits
      // them together): the servers locked in one statement.
      commitMany: async (ops) => {
        const results = new Map<string, JsonObject>();
        const named = ops.filter((op) => op.snapshot().vmId);
        await this.store.lockServers(named.map(serverIdOf));
        for (const op of named) {
          try {
            results.set(op.id, this.result(op));
          } catch {
            // Unreadable parameters: commit() decides alone.
          }
        }
        return results;
      },
    },
  ];

  constructor(
    private readonly store: TermStore,
    private readonly compute: ComputeGateway,
    private readonly executors: OperationExecutors,
  ) {}

  onModuleInit(): void {
    this.executors.register(this);
  }

  private result(op: Operation): JsonObject {
    const p = suspendParams.read(op.params);
    return { server_id: serverIdOf(op), suspended_at: p.suspendedAt, release_at: p.releaseAt, power_before: p.powerBefore };
  }
}

/**
 * volume.suspend (terms.md "Expiry: suspension"): the volume is `suspended` from acceptance.
 * Attached: `unmounting` and `detaching` as volume.detach's (recorded: mounted false, then no
 * server and no mount path; `previous_server_id` was set at acceptance). Available: one step,
 * `suspending`, with no provider call. Result `{volume_id, suspended_at, release_at,
 * previous_server_id}`. A failure leaves it suspended, still on its server as the provider holds
 * it (the reconciliation sweep and `cli verify` see it). It has no failure hook, so the worker runs
 * its operations in its batches, their steps committed together (commitMany).
 */
@Injectable()
export class SuspendVolumeExecutor implements OperationExecutor, OnModuleInit {
  readonly type = 'volume.suspend' as const;
  readonly steps: readonly OperationStepExecutor[] = [
    {
      name: 'unmounting',
      perform: async (op) => {
        await this.provider.unmountDisk({ volumeId: volumeIdOf(op), step: key(op, 'unmounting') });
        return {};
      },
      commit: async (op) => {
        await this.lockLive(op);
        await this.store.volumeUnmounted(volumeIdOf(op));
      },
      commitMany: async (ops) => {
        const live = await this.lockLiveMany(ops);
        await this.store.volumesUnmounted(live.map(volumeIdOf));
        return new Map(live.map((op) => [op.id, {}]));
      },
    },
    {
      name: 'detaching',
      perform: async (op) => {
        await this.provider.detachDisk({ volumeId: volumeIdOf(op), step: key(op, 'detaching') });
        return {};
      },
      commit: async (op) => {
        await this.lockLive(op);
        await this.store.volumeDetached(volumeIdOf(op));
        return this.result(op);
      },
      commitMany: async (ops) => {
        const live = await this.lockLiveMany(ops);
        await this.store.volumesDetached(live.map(volumeIdOf));
        return new Map(live.map((op) => [op.id, this.result(op)]));
      },
    },
    {
      // The term sweep ends the operations it creates with this step itself; the step is here for
      // those accepted pending.
      name: 'suspending',
      commit: async (op) => {
        await this.lockLive(op);
        return this.result(op);
      },
      commitMany: async (ops) => new Map((await this.lockLiveMany(ops)).map((op) => [op.id, this.result(op)])),
    },
  ];

  constructor(
    private readonly store: TermStore,
    private readonly provider: ProviderGateway,
    private readonly executors: OperationExecutors,
  ) {}

  onModuleInit(): void {
    this.executors.register(this);
  }

  private async lockLive(op: Operation): Promise<void> {
    const volume = await this.store.lockVolume(volumeIdOf(op));
    if (!volume || volume.deleted) throw invalidState(`Volume ${volumeIdOf(op)} no longer exists`);
  }

  /**
   * lockLive() of a batch, one statement: the operations whose volume exists, is not deleted and
   * whose parameters read; the others are left out (commit() fails them alone).
   */
  private async lockLiveMany(ops: readonly Operation[]): Promise<Operation[]> {
    const named = ops.filter((op) => op.volumeId !== null);
    const locked = await this.store.lockVolumes(named.map(volumeIdOf));
    return named.filter((op) => {
      const volume = locked.get(volumeIdOf(op));
      if (!volume || volume.deleted) return false;
      try {
        suspendParams.read(op.params);
        return true;
      } catch {
        return false;
      }
    });
  }

  private result(op: Operation): JsonObject {
    return suspendVolumeResult(op);
  }
}
