import { DomainError, invalidState } from '../../../shared/kernel/errors/domain-error';

/** What the simulated storage provider knows of one disk (its own table, or the in-memory adapter's map). */
export interface SimulatedDisk {
  diskId: string;
  volumeId: string;
  zoneId: string;
  sizeGb: number;
  type: string;
  serverId: string | null;
  mountPath: string | null;
  mounted: boolean;
  deleted: boolean;
}

export type ProviderAction = 'create' | 'attach' | 'mount' | 'unmount' | 'detach' | 'delete' | 'resize';

export type ProviderCallInput =
  | { action: 'create'; volumeId: string; zoneId: string; sizeGb: number; type: string; diskId: string; fromSnapshotId?: string | null }
  | { action: 'attach'; volumeId: string; serverId: string }
  | { action: 'mount'; volumeId: string; mountPath: string }
  | { action: 'resize'; volumeId: string; sizeGb: number }
  | { action: 'unmount' | 'detach' | 'delete'; volumeId: string };

const noDisk = (volumeId: string): DomainError => invalidState(`The storage provider has no disk for volume ${volumeId}`);

/**
 * The simulated provider's rules, shared by its database adapter and the in-memory one: the
 * disk after the call (`disk` before it; undefined when the volume has none). A refusal is a
 * DomainError (final for the operation). Creating a disk the volume already has answers that
 * disk; deleting a disk that does not exist (or no longer does) succeeds; deleting an attached
 * disk detaches it first (a failed purchase's compensation may find it attached); resizing grows
 * the disk (attached or not), and a disk already that large stays as it is.
 */
export function simulateCall(disk: SimulatedDisk | undefined, input: ProviderCallInput): SimulatedDisk | undefined {
  const live = disk && !disk.deleted ? disk : undefined;
  switch (input.action) {
    case 'create':
      if (live) return live;
      if (disk) throw invalidState(`The disk of volume ${input.volumeId} was deleted; it cannot be created again`);
      return {
        diskId: input.diskId, volumeId: input.volumeId, zoneId: input.zoneId, sizeGb: input.sizeGb, type: input.type,
        serverId: null, mountPath: null, mounted: false, deleted: false,
      };
    case 'attach':
      if (!live) throw noDisk(input.volumeId);
      if (live.serverId !== null && live.serverId !== input.serverId) {
        throw invalidState(`The disk of volume ${input.volumeId} is attached to server ${live.serverId}`);
      }
      return { ...live, serverId: input.serverId };
    case 'mount':
      if (!live) throw noDisk(input.volumeId);
      if (live.serverId === null) throw invalidState(`The disk of volume ${input.volumeId} is not attached to a server`);
      return { ...live, mountPath: input.mountPath, mounted: true };
    case 'unmount':
      if (!live) throw noDisk(input.volumeId);
      return { ...live, mountPath: null, mounted: false };
    case 'detach':
      if (!live) throw noDisk(input.volumeId);
      if (live.mounted) throw invalidState(`The disk of volume ${input.volumeId} is mounted; unmount it first`);
      return { ...live, serverId: null, mountPath: null };
    case 'resize':
      if (!live) throw noDisk(input.volumeId);
      return live.sizeGb >= input.sizeGb ? live : { ...live, sizeGb: input.sizeGb };
    case 'delete':
      if (!live) return disk;
      return { ...live, serverId: null, mountPath: null, mounted: false, deleted: true };
  }
}
