import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { Clock } from '../../../shared/kernel/clock/clock';
import { UnitOfWork, WorkerUnitOfWork } from '../../../shared/database/unit-of-work';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { RECONCILE_SWEEP_PAGE, reconcileSettled } from '../../operations/application/reconcile-sweep';
import { Volume } from '../domain/volume';
import { ProviderDisk } from '../../storage-provider/application/block-storage.port';
import { ProviderGateway } from '../../storage-provider/application/provider-gateway';
import { settledDeleting } from './volume-action-executors';
import { VolumeStateChange, VolumeStates } from './volume-states.port';
import { VolumeRepository } from './volumes.port';

/** What the sweep does for one volume, given its disk at the provider. */
export type Repair =
  | { kind: 'record'; change: VolumeStateChange; reason: string }
  | { kind: 'detach_at_provider'; reason: string }
  | { kind: 'report'; reason: string };

/**
 * The repair of a live volume (no operation in flight) whose row differs from its disk at the
 * provider. Forward-only for what a lost answer may have done (a delete or a detach that took
 * effect is recorded as done); the row wins for a failed attach (the disk is detached again at
 * the provider: the attach's compensation, durable because every sweep retries it). A disk that
 * is gone under a volume that was not being deleted is flagged (disk_missing_since: renewal and
 * attach answer 409) and reported, never invented. Gigabytes a failed resize left reserved (its
 * disk could not be read then) are settled by the disk's size: kept as the volume's size when the
 * disk grew, given back when it did not.
 */
export function planRepair(volume: Volume, disk: ProviderDisk | null, now: Date): Repair | undefined {
  if (volume.status === 'creating' || volume.deletedAt) return undefined;
  if (volume.status === 'deleting') return { kind: 'record', change: settledDeleting(volume, disk, now), reason: disk ? 'the delete did not take effect at the provider' : 'the disk was deleted at the provider' };
  if (!disk) {
    // Reported, never invented; flagged once so that renewal and attach are refused (409).
    if (volume.diskMissingSince) return { kind: 'report', reason: `${volume.status} volume has no disk at the provider` };
    return { kind: 'record', change: { diskMissingSince: now }, reason: `${volume.status} volume has no disk at the provider` };
  }
  if (volume.diskMissingSince) return { kind: 'record', change: { diskMissingSince: null }, reason: 'the disk is at the provider again' };
  const reserved = volume.resizeReservedGb ?? 0;
  if (reserved > 0) {
    // A failed resize whose disk could not be read: settled by what the provider holds (a resize that took effect is kept).
    return disk.sizeGb > volume.sizeGb
      ? { kind: 'record', change: { sizeGb: volume.sizeGb + reserved, resizeReservedGb: 0 }, reason: 'the resize took effect at the provider' }
      : { kind: 'record', change: { resizeReservedGb: 0 }, reason: 'the resize did not take effect at the provider' };
  }
  if (volume.status === 'attached' && volume.server) {
    if (disk.serverId === null) return { kind: 'record', change: { status: 'available', serverId: null, mountPath: null, mounted: false }, reason: 'the disk was detached at the provider' };
    if (disk.serverId === volume.server.id && disk.mounted !== volume.mounted) return { kind: 'record', change: { mounted: disk.mounted }, reason: `the disk is ${disk.mounted ? 'mounted' : 'unmounted'} at the provider` };
    if (disk.serverId !== volume.server.id) return { kind: 'report', reason: `volume names server ${volume.server.id} but its disk is attached to ${disk.serverId}` };
    return undefined;
  }
  if (volume.status === 'available' && disk.serverId !== null) return { kind: 'detach_at_provider', reason: `the disk is attached to ${disk.serverId} at the provider (an attach that failed)` };
  return undefined;
}

/**
 * The twin of the orphan-disk sweep: every RECONCILE_SWEEP_INTERVAL_MS the worker processes
 * compare each live volume with no operation in flight with its disk at the provider
 * (BlockStorage.getDisk) and repair what differs (planRepair): a `deleting` volume left by a
 * delete whose answer was lost becomes `deleted` or goes back to what its disk is; an `attached`
 * volume whose disk was detached becomes `available`; an `available` volume whose disk is still
 * attached (a failed attach whose compensation did not reach the provider) is detached there.
 * Each change is audited (`volume.reconciled`, actor system). Holds no database connection while
 * it calls the provider; skips a volume whose disk cannot be read (the next sweep tries again);
 * stops between two volumes once `stopping()` says so. Returns how many volumes it repaired.
 */
@Injectable()
export class ReconcileVolumesWithProvider {
  private readonly logger = new Logger('ReconcileVolumes');

  constructor(
    private readonly provider: ProviderGateway,
    private readonly states: VolumeStates,
    private readonly volumes: VolumeRepository,
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
          this.logger.warn({ msg: 'could not reconcile a volume with its disk; the next sweep tries again', volume_id: id, err: err instanceof Error ? err.message : String(err) }),
      },
      stopping,
      pageSize,
    );
  }

  /** One volume: read its disk (no transaction), then repair under the volume's lock, if it still differs and is still settled. */
  async reconcile(orgId: string, volumeId: string): Promise<boolean> {
    const disk = await this.provider.getDisk(volumeId);
    const decided = await this.uow.run(async () => {
      const volume = await this.volumes.lockInOrg(orgId, volumeId);
      if (!volume || (await this.states.busy(volumeId))) return undefined;
      const repair = planRepair(volume, disk, this.clock.now());
      if (!repair) return undefined;
      if (repair.kind === 'record') {
        await this.states.apply(volume.id, repair.change);
        await this.audit.record({
          orgId,
          actorType: 'system',
          actorId: null,
          action: 'volume.reconciled',
          targetId: volume.id,
          ipAddress: null,
          requestId: null,
          data: { reason: repair.reason, from: { status: volume.status, server_id: volume.server?.id ?? null, mounted: volume.mounted }, to: changeData(repair.change) },
        });
      }
      return { repair, volume };
    });
    if (!decided) return false;
    const { repair, volume } = decided;
    if (repair.kind === 'report') {
      this.logger.warn({ msg: 'volume differs from its disk at the provider and cannot be repaired automatically', volume_id: volumeId, reason: repair.reason });
      return false;
    }
    if (repair.kind === 'detach_at_provider') {
      const step = `reconcile/${randomUUID()}`;
      if (disk?.mounted) await this.provider.unmountDisk({ volumeId, step: `${step}/unmount` });
      await this.provider.detachDisk({ volumeId, step: `${step}/detach` });
      await this.uow.run(() =>
        this.audit.record({
          orgId,
          actorType: 'system',
          actorId: null,
          action: 'volume.reconciled',
          targetId: volumeId,
          ipAddress: null,
          requestId: null,
          data: { reason: repair.reason, from: { status: volume.status, server_id: null, mounted: false }, to: { disk_detached_at_provider: disk?.serverId ?? null } },
        }),
      );
    }
    this.logger.log({ msg: 'reconciled a volume with its disk at the provider', volume_id: volumeId, reason: repair.reason });
    return true;
  }
}

function changeData(c: VolumeStateChange): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (c.status !== undefined) out.status = c.status;
  if (c.serverId !== undefined) out.server_id = c.serverId;
  if (c.mounted !== undefined) out.mounted = c.mounted;
  if (c.deletedAt !== undefined) out.deleted_at = c.deletedAt.toISOString();
  if (c.diskMissingSince !== undefined) out.disk_missing_since = c.diskMissingSince?.toISOString() ?? null;
  if (c.sizeGb !== undefined) out.size_gb = c.sizeGb;
  if (c.resizeReservedGb !== undefined) out.resize_reserved_gb = c.resizeReservedGb;
  return out;
}
