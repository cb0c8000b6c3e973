import { Injectable, OnModuleInit } from '@nestjs/common';
import { DomainError, invalidState } from '../../../shared/kernel/errors/domain-error';
import { OperationExecutor, OperationExecutors, OperationStepExecutor } from '../../operations/application/operation-executors';
import { ProviderTruth, readProviderTruth } from '../../operations/application/provider-truth';
import { JsonObject, Operation } from '../../operations/domain/operation';
import { ComputeGateway } from '../../servers/application/compute-gateway';
import { ProviderInstance } from '../../servers/application/compute-provider.port';
import { ProviderGateway } from '../../storage-provider/application/provider-gateway';
import { suspendParams } from '../domain/suspension';
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
 * answers what it holds; the step is retried while the provider is unavailable. Result
 * `{server_id, suspended_at, release_at, power_before}`. A failure leaves the server suspended
 * (`cli verify` reports a suspended server whose instance still runs).
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
        const p = suspendParams.read(op.params);
        await this.store.lockServer(serverIdOf(op));
        return { server_id: serverIdOf(op), suspended_at: p.suspendedAt, release_at: p.releaseAt, power_before: p.powerBefore };
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

  observe(op: Operation): Promise<ProviderTruth<ProviderInstance | null>> {
    return readProviderTruth(() => this.compute.getInstance(serverIdOf(op)));
  }

  async failed(): Promise<void> {
    // The server stays suspended whatever the provider holds: a suspended server is never resumed but by a renewal.
  }
}

/**
 * volume.suspend (terms.md "Expiry: suspension"): the volume is `suspended` from acceptance.
 * Attached: `unmounting` and `detaching` as volume.detach's (recorded: mounted false, then no
 * server and no mount path; `previous_server_id` was set at acceptance). Available: one step,
 * `suspending`, with no provider call. Result `{volume_id, suspended_at, release_at,
 * previous_server_id}`. A failure leaves it suspended, still on its server as the provider holds
 * it (the reconciliation sweep and `cli verify` see it).
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
    },
    {
      name: 'suspending',
      commit: async (op) => {
        await this.lockLive(op);
        return this.result(op);
      },
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

  private result(op: Operation): JsonObject {
    const p = suspendParams.read(op.params);
    return { volume_id: volumeIdOf(op), suspended_at: p.suspendedAt, release_at: p.releaseAt, previous_server_id: p.previousServerId };
  }

  async failed(): Promise<void> {
    // The volume stays suspended; its disk is wherever the provider left it.
  }
}
