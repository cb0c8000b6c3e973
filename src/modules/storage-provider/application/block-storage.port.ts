/**
 * The storage provider, as the worker sees it (lifecycle.md "The storage provider"). Every call
 * is idempotent by (volume id, step): called again for the same volume and step after a crash or
 * a lost answer, it does not create, attach or mount twice and answers as the first call did.
 * A call never runs inside a database transaction or under a row lock.
 *
 * An adapter throws ProviderUnavailable when the provider cannot be reached or refuses for a
 * while (the application layer retries with backoff and keeps the circuit); any DomainError it
 * throws is final for the operation.
 */
export interface ProviderDisk {
  /** The provider's own id of the disk. */
  diskId: string;
  volumeId: string;
  zoneId: string;
  sizeGb: number;
  /** The server it is attached to, or null. */
  serverId: string | null;
  mountPath: string | null;
  mounted: boolean;
}

/** A snapshot the provider holds: a point-in-time copy of one disk, its data kept after the disk is gone. */
export interface ProviderSnapshot {
  /** The provider's own id of the snapshot. */
  providerId: string;
  snapshotId: string;
  /** The volume whose disk was copied. */
  volumeId: string;
  zoneId: string;
  sizeGb: number;
  type: string;
  /** What the copy holds (the simulated provider's data marker: a disk restored from it holds the same). */
  dataMarker: string;
}

export class ProviderUnavailable extends Error {
  constructor(message = 'The storage provider is unavailable') {
    super(message);
    this.name = 'ProviderUnavailable';
  }
}

/** One page of BlockStorage.listDisks: the disks whose volume id is greater than `after` (all when unset), at most `limit`. */
export interface DiskPage {
  after?: string;
  limit: number;
}

/** Every call names the step it performs; the pair (volumeId, step) is its idempotency key. */
export abstract class BlockStorage {
  /** `serverId`: the server the disk is bought for (attached next), so a provider with several hosts makes it on that server's host. */
  /** `fromSnapshotId`: the new disk holds that snapshot's data (a restore); its size may be larger than the snapshot's. */
  abstract createDisk(input: { volumeId: string; step: string; zoneId: string; sizeGb: number; type: string; serverId?: string | null; fromSnapshotId?: string | null }): Promise<ProviderDisk>;
  abstract attachDisk(input: { volumeId: string; step: string; serverId: string }): Promise<ProviderDisk>;
  abstract mountDisk(input: { volumeId: string; step: string; mountPath: string }): Promise<ProviderDisk>;
  abstract unmountDisk(input: { volumeId: string; step: string }): Promise<ProviderDisk>;
  abstract detachDisk(input: { volumeId: string; step: string }): Promise<ProviderDisk>;
  /**
   * Grows the disk to `sizeGb` (online when it is attached: the filesystem grows with it). A disk
   * already that large answers as it is; a disk the provider does not hold is a DomainError.
   */
  abstract resizeDisk(input: { volumeId: string; step: string; sizeGb: number }): Promise<ProviderDisk>;
  /** Deleting a disk that does not exist (never created, or deleted already) succeeds. */
  abstract deleteDisk(input: { volumeId: string; step: string }): Promise<void>;
  /**
   * The provider's live disks, ordered by volume id (for `cli verify`: provider disks = volumes;
   * and the orphan sweep). With `page`: at most `limit` of them, those whose volume id comes
   * after `after`, so a caller can walk them a page at a time as a real provider's API pages.
   */
  abstract listDisks(page?: DiskPage): Promise<ProviderDisk[]>;
  /**
   * The provider's truth about one volume's disk: the live disk, or null when there is none
   * (never created, or deleted). A read: it changes nothing and may be called any time, so the
   * worker reads it before giving anything back after a call whose answer was lost.
   */
  abstract getDisk(volumeId: string): Promise<ProviderDisk | null>;
  /**
   * Copies the volume's live disk (attached or not: a crash-consistent copy) as the snapshot
   * `snapshotId`; idempotent by the snapshot id (called again, it answers the copy it made).
   * A volume without a live disk: a DomainError (invalid_state).
   */
  abstract createSnapshot(input: { snapshotId: string; step: string; volumeId: string }): Promise<ProviderSnapshot>;
  /** Deleting a snapshot that does not exist (never made, or deleted already) succeeds. */
  abstract deleteSnapshot(input: { snapshotId: string; step: string }): Promise<void>;
  /** The provider's truth about one snapshot: the live copy, or null (never made, or deleted). A read. */
  abstract getSnapshot(snapshotId: string): Promise<ProviderSnapshot | null>;
  /**
   * The provider's live snapshots, ordered by snapshot id (for `cli verify`; and the orphan sweep,
   * a page at a time: with `page`, at most `limit` of them, those whose snapshot id comes after `after`).
   */
  abstract listSnapshots(page?: { after?: string; limit: number }): Promise<ProviderSnapshot[]>;
  /**
   * A cheap health probe (no disk touched): resolves when the provider answers, throws
   * ProviderUnavailable otherwise. Lets the circuit learn that the provider is down (or back)
   * while no operation calls it.
   */
  abstract ping(): Promise<void>;
}

/**
 * Whether the provider is known to be down (the circuit is open after 5 consecutive failed
 * calls, until a call succeeds). New purchases, attaches, detaches and deletes answer 503
 * provider_unavailable while it is, without reserving anything; GET /v1/ready reports it.
 */
export abstract class ProviderHealth {
  abstract isDown(): boolean;
}
