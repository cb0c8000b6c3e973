import { Injectable, OnModuleInit } from '@nestjs/common';
import { Clock, addMonthsClamped } from '../../../shared/kernel/clock/clock';
import { invalidState } from '../../../shared/kernel/errors/domain-error';
import { OperationExecutor, OperationExecutors, OperationStepExecutor } from '../../operations/application/operation-executors';
import { ProviderTruth, readProviderTruth } from '../../operations/application/provider-truth';
import { JsonObject, Operation } from '../../operations/domain/operation';
import { EventOutbox } from '../../webhooks/application/event-outbox.port';
import { ProviderDisk } from '../../storage-provider/application/block-storage.port';
import { Volume } from '../domain/volume';
import { presentVolume } from '../domain/volume-json';
import { ProviderGateway } from '../../storage-provider/application/provider-gateway';
import { attachParams, purchaseParams, resizeParams } from './volume-action-params';
import { VolumeResizes } from './volume-resizes.port';
import { VolumeStateChange, VolumeStates } from './volume-states.port';
import { VolumeRepository } from './volumes.port';

/**
 * The worker's executors of volume.create, volume.attach, volume.detach and volume.delete
 * (lifecycle.md "Buying", "Attach, detach, delete", "The storage provider"). Each step that
 * changes the disk calls the storage provider in `perform` (outside any transaction, through
 * the ProviderGateway), then `commit` records on the volume row, in the step's short
 * transaction, what the provider now holds. The provider's idempotency key of a call is
 * `<operation id>/<step>`: a step run again (a crash, a lost answer, a retry) never creates,
 * attaches or mounts twice, while a later operation on the same volume (attach again after a
 * detach) is a new call.
 */
const key = (operation: Operation, step: string): string => `${operation.id}/${step}`;

/** Shared by the four executors: registration, the volume lookup under lock. (Injectable: its constructor's types are the subclasses'.) */
@Injectable()
abstract class VolumeActionExecutor implements OperationExecutor, OnModuleInit {
  abstract readonly type: OperationExecutor['type'];
  abstract readonly steps: readonly OperationStepExecutor[];

  constructor(
    protected readonly volumes: VolumeRepository,
    protected readonly states: VolumeStates,
    protected readonly provider: ProviderGateway,
    protected readonly executors: OperationExecutors,
    protected readonly clock: Clock,
    protected readonly outbox: EventOutbox,
  ) {}

  onModuleInit(): void {
    this.executors.register(this);
  }

  protected volumeId(operation: Operation): string {
    if (!operation.volumeId) throw invalidState(`Operation ${operation.id} names no volume`);
    return operation.volumeId;
  }

  /** The operation's volume, locked until the step's transaction ends. */
  protected async lockVolume(operation: Operation): Promise<Volume> {
    const volume = await this.volumes.lockInOrg(operation.orgId, this.volumeId(operation));
    if (!volume) throw invalidState(`Volume ${operation.volumeId} no longer exists`);
    return volume;
  }

  /** The volume moved to `deleted` in this transaction: its volume.deleted event, the Volume as its GET returns it at commit. */
  protected async deleted(operation: Operation, volumeId: string): Promise<void> {
    const volume = await this.volumes.lockInOrg(operation.orgId, volumeId);
    if (volume) await this.outbox.record({ orgId: operation.orgId, type: 'volume.deleted', createdAt: volume.deletedAt ?? this.clock.now(), data: presentVolume(volume) });
  }

  /** `unmounting` of volume.detach and volume.delete: unmount at the provider, then record mounted false. */
  protected unmountingStep(): OperationStepExecutor {
    return {
      name: 'unmounting',
      perform: async (op) => {
        await this.provider.unmountDisk({ volumeId: this.volumeId(op), step: key(op, 'unmounting') });
        return {};
      },
      commit: async (op) => {
        await this.lockVolume(op);
        await this.states.apply(this.volumeId(op), { mounted: false });
      },
    };
  }

  /** The provider's truth about the operation's disk (read before a failed operation gives anything back). */
  observe(op: Operation): Promise<ProviderTruth<ProviderDisk | null>> {
    return readProviderTruth(() => this.provider.getDisk(this.volumeId(op)));
  }

  /** The provider call of `detaching` (volume.detach and volume.delete; each records it its own way). */
  protected async detachAtProvider(op: Operation): Promise<JsonObject> {
    await this.provider.detachDisk({ volumeId: this.volumeId(op), step: key(op, 'detaching') });
    return {};
  }
}

/**
 * volume.create: payment_reserved (done at acceptance), creating_volume, attaching (with a
 * server: attach and mount), ready (no provider call: the volume becomes `available` or
 * `attached`, its term starts now; the worker captures the hold in the same transaction).
 * Failure of any step: the provider's disk is deleted (compensate, outside the transaction;
 * left to `cli verify` when the provider is down then), the volume `deleted` (capacity back
 * through the counter's trigger), the hold released by the worker.
 */
@Injectable()
export class CreateVolumeExecutor extends VolumeActionExecutor {
  readonly type = 'volume.create' as const;
  readonly steps: readonly OperationStepExecutor[] = [
    { name: 'payment_reserved', commit: async () => undefined },
    {
      name: 'creating_volume',
      perform: async (op) => {
        const p = purchaseParams.read(op.params);
        const disk = await this.provider.createDisk({
          volumeId: this.volumeId(op), step: key(op, 'creating_volume'), zoneId: p.zoneId, sizeGb: p.sizeGb, type: p.type, serverId: p.serverId,
        });
        return { disk_id: disk.diskId };
      },
      commit: async () => undefined,
    },
    {
      // A restore: the provider makes the disk from the snapshot's data (idempotent by the step's key).
      name: 'restoring',
      perform: async (op) => {
        const p = purchaseParams.read(op.params);
        if (!p.snapshotId) throw invalidState(`Operation ${op.id} has a restoring step but no snapshot`);
        const disk = await this.provider.createDisk({
          volumeId: this.volumeId(op), step: key(op, 'restoring'), zoneId: p.zoneId, sizeGb: p.sizeGb, type: p.type, serverId: p.serverId, fromSnapshotId: p.snapshotId,
        });
        return { disk_id: disk.diskId };
      },
      commit: async () => undefined,
    },
    {
      name: 'attaching',
      perform: async (op) => {
        const p = purchaseParams.read(op.params);
        if (!p.serverId || !p.mountPath) throw invalidState(`Operation ${op.id} has an attaching step but no server`);
        const volumeId = this.volumeId(op);
        await this.provider.attachDisk({ volumeId, step: key(op, 'attaching'), serverId: p.serverId });
        const disk = await this.provider.mountDisk({ volumeId, step: key(op, 'attaching/mount'), mountPath: p.mountPath });
        return { server_id: disk.serverId, mount_path: disk.mountPath };
      },
      commit: async () => undefined,
    },
    { name: 'ready', commit: (op) => this.ready(op) },
  ];

  private async ready(op: Operation): Promise<JsonObject> {
    const p = purchaseParams.read(op.params);
    const volume = await this.lockVolume(op);
    if (volume.status !== 'creating') throw invalidState(`Volume ${volume.id} is ${volume.status}, not creating`);
    const expiresAt = addMonthsClamped(this.clock.now(), p.termMonths);
    const attached = p.serverId !== null;
    await this.states.apply(volume.id, {
      status: attached ? 'attached' : 'available',
      serverId: p.serverId,
      mountPath: attached ? p.mountPath : null,
      mounted: attached,
      termMonths: p.termMonths,
      billing: p.amount,
      expiresAt,
    });
    return {
      volume_id: volume.id,
      size_gb: volume.sizeGb,
      expires_at: expiresAt.toISOString(),
      charged: { currency: p.amount.currency, amount: p.amount.format() },
    };
  }

  async compensate(op: Operation): Promise<void> {
    await this.provider.deleteDisk({ volumeId: this.volumeId(op), step: key(op, 'compensate') });
  }

  async failed(op: Operation): Promise<void> {
    const volume = await this.volumes.lockInOrg(op.orgId, this.volumeId(op));
    if (!volume || volume.deletedAt) return;
    await this.states.apply(volume.id, { status: 'deleted', deletedAt: this.clock.now(), serverId: null, mountPath: null, mounted: false });
    await this.deleted(op, volume.id);
  }
}

/**
 * volume.attach: attaching, mounting; the volume stays `available` until the mount is recorded
 * (then `attached`, mounted, server, mount path). Failure: the provider's attachment is undone
 * (compensate: unmount, detach) and the volume stays `available`.
 */
@Injectable()
export class AttachVolumeExecutor extends VolumeActionExecutor {
  readonly type = 'volume.attach' as const;
  readonly steps: readonly OperationStepExecutor[] = [
    {
      name: 'attaching',
      perform: async (op) => {
        const disk = await this.provider.attachDisk({ volumeId: this.volumeId(op), step: key(op, 'attaching'), serverId: attachParams.read(op.params).serverId });
        return { server_id: disk.serverId };
      },
      commit: async () => undefined,
    },
    {
      name: 'mounting',
      perform: async (op) => {
        const disk = await this.provider.mountDisk({ volumeId: this.volumeId(op), step: key(op, 'mounting'), mountPath: attachParams.read(op.params).mountPath });
        return { mount_path: disk.mountPath };
      },
      commit: (op) => this.attached(op),
    },
  ];

  private async attached(op: Operation): Promise<JsonObject> {
    const p = attachParams.read(op.params);
    const volume = await this.lockVolume(op);
    if (volume.deletedAt) throw invalidState(`Volume ${volume.id} is deleted`);
    await this.states.apply(volume.id, { status: 'attached', serverId: p.serverId, mountPath: p.mountPath, mounted: true });
    return { volume_id: volume.id, status: 'attached' };
  }

  async compensate(op: Operation): Promise<void> {
    const volumeId = this.volumeId(op);
    await this.provider.unmountDisk({ volumeId, step: key(op, 'compensate/unmount') });
    await this.provider.detachDisk({ volumeId, step: key(op, 'compensate/detach') });
  }

  async failed(): Promise<void> {
    // The volume was never changed: it stays `available`.
  }
}

/**
 * volume.detach: unmounting (recorded: mounted false), detaching (recorded: `available`, no
 * server, no mount path). A failed step fails the operation and leaves the volume attached (and
 * mounted unless the unmount went through): never a forced detach.
 */
@Injectable()
export class DetachVolumeExecutor extends VolumeActionExecutor {
  readonly type = 'volume.detach' as const;
  readonly steps: readonly OperationStepExecutor[] = [
    this.unmountingStep(),
    {
      name: 'detaching',
      perform: (op) => this.detachAtProvider(op),
      commit: async (op) => {
        const volume = await this.lockVolume(op);
        await this.states.apply(volume.id, { status: volume.deletedAt ? undefined : 'available', serverId: null, mountPath: null, mounted: false });
        return { volume_id: volume.id, status: 'available' };
      },
    },
  ];

  /**
   * Forward-only: a detach whose answer was lost may have taken effect. The volume shows what the
   * provider holds: `available` when the disk is detached there, still `attached` (mounted as the
   * disk is) when it is not. When the provider cannot be read, it stays `attached` and the
   * reconciliation sweep settles it once the provider answers.
   */
  async failed(op: Operation, _error: unknown, truth?: ProviderTruth<unknown>): Promise<void> {
    if (!truth?.known || !truth.value) return;
    const disk = truth.value as ProviderDisk;
    const volume = await this.volumes.lockInOrg(op.orgId, this.volumeId(op));
    if (!volume || volume.deletedAt) return;
    if (disk.serverId === null) await this.states.apply(volume.id, { status: 'available', serverId: null, mountPath: null, mounted: false });
    else if (volume.server) await this.states.apply(volume.id, { mounted: disk.mounted });
  }
}

/**
 * volume.delete: unmounting and detaching (when it was attached), deleting. The volume is
 * `deleting` from acceptance; success: `deleted`, deleted_at, capacity back. Failure: the volume
 * returns to `attached` when it still has a server, else `available` (what it is at the
 * provider), and may be deleted again.
 */
@Injectable()
export class DeleteVolumeExecutor extends VolumeActionExecutor {
  readonly type = 'volume.delete' as const;
  readonly steps: readonly OperationStepExecutor[] = [
    this.unmountingStep(),
    {
      name: 'detaching',
      perform: (op) => this.detachAtProvider(op),
      commit: async (op) => {
        await this.lockVolume(op);
        await this.states.apply(this.volumeId(op), { serverId: null, mountPath: null, mounted: false });
      },
    },
    {
      name: 'deleting',
      perform: async (op) => {
        await this.provider.deleteDisk({ volumeId: this.volumeId(op), step: key(op, 'deleting') });
        return {};
      },
      commit: async (op) => {
        const volume = await this.lockVolume(op);
        if (!volume.deletedAt) {
          await this.states.apply(volume.id, { status: 'deleted', deletedAt: this.clock.now(), serverId: null, mountPath: null, mounted: false });
          await this.deleted(op, volume.id);
        }
        return { volume_id: volume.id, status: 'deleted' };
      },
    },
  ];

  /**
   * Forward-only: a delete whose answer was lost may have taken effect. The volume shows what the
   * provider holds: `deleted` (capacity back) when the disk is gone, `attached` or `available` as
   * the disk is when it is still there, and it stays `deleting` when the provider cannot be read
   * (the reconciliation sweep settles it once the provider answers). Never `available` for a disk
   * that is gone.
   */
  async failed(op: Operation, _error: unknown, truth?: ProviderTruth<unknown>): Promise<void> {
    const volume = await this.volumes.lockInOrg(op.orgId, this.volumeId(op));
    if (!volume || volume.deletedAt || volume.status !== 'deleting') return;
    if (!truth?.known) return;
    const disk = truth.value as ProviderDisk | null;
    await this.states.apply(volume.id, settledDeleting(volume, disk, this.clock.now()));
  }
}

/**
 * volume.resize: payment_reserved (done at acceptance: the hold, and the added gigabytes reserved
 * in the region's capacity), resizing (the provider grows the disk, online when attached; then,
 * in the step's transaction, the volume gets its new size, the reservation becomes part of it and
 * the worker captures the hold). Later renewals charge the new size. `expires_at` does not move.
 *
 * Failure: the hold released by the worker; what is given back follows the provider's truth (a
 * resize whose answer was lost may have taken effect, and one that did is never given back): the
 * disk at the new size there, the volume takes it (nothing charged for a failed operation); the
 * disk still smaller, the reservation is given back; the provider unreadable, the reservation
 * stays (capacity is never handed out twice) until a later read settles it.
 */
@Injectable()
export class ResizeVolumeExecutor extends VolumeActionExecutor {
  readonly type = 'volume.resize' as const;

  constructor(
    volumes: VolumeRepository,
    states: VolumeStates,
    provider: ProviderGateway,
    executors: OperationExecutors,
    clock: Clock,
    outbox: EventOutbox,
    private readonly resizes: VolumeResizes,
  ) {
    super(volumes, states, provider, executors, clock, outbox);
  }

  readonly steps: readonly OperationStepExecutor[] = [
    { name: 'payment_reserved', commit: async () => undefined },
    {
      name: 'resizing',
      perform: async (op) => {
        const disk = await this.provider.resizeDisk({ volumeId: this.volumeId(op), step: key(op, 'resizing'), sizeGb: resizeParams.read(op.params).sizeGb });
        return { size_gb: disk.sizeGb };
      },
      commit: async (op) => {
        const p = resizeParams.read(op.params);
        const volume = await this.lockVolume(op);
        if (volume.deletedAt) throw invalidState(`Volume ${volume.id} is deleted`);
        await this.resizes.complete(volume.id, p.sizeGb);
        return { volume_id: volume.id, size_gb: p.sizeGb, charged: { currency: p.amount.currency, amount: p.amount.format() } };
      },
    },
  ];

  async failed(op: Operation, _error: unknown, truth?: ProviderTruth<unknown>): Promise<void> {
    const p = resizeParams.read(op.params);
    const volume = await this.volumes.lockInOrg(op.orgId, this.volumeId(op));
    if (!volume || volume.deletedAt) return;
    if (!truth?.known) return;
    const disk = truth.value as ProviderDisk | null;
    if (disk && disk.sizeGb >= p.sizeGb) await this.resizes.complete(volume.id, p.sizeGb);
    else await this.resizes.release(volume.id);
  }
}

/** What a `deleting` volume with no operation in flight becomes, given its disk at the provider (null: gone). */
export function settledDeleting(volume: Volume, disk: ProviderDisk | null, now: Date): VolumeStateChange {
  if (!disk) return { status: 'deleted', deletedAt: now, serverId: null, mountPath: null, mounted: false };
  if (disk.serverId !== null && volume.server && disk.serverId === volume.server.id) return { status: 'attached', mounted: disk.mounted };
  return { status: 'available', serverId: null, mountPath: null, mounted: false };
}
