/** A resource whose deadline has come, claimed (row locked) by a term sweep's transaction. */
export interface DueResource {
  id: string;
  orgId: string;
  status: string;
  /** A volume's server (attached), else null. */
  serverId: string | null;
}

/** A live resource whose expiry notice for one offset is due. */
export interface NoticeDue {
  id: string;
  orgId: string;
  name: string;
  expiresAt: Date;
}

/**
 * The rows the term sweeps read and write (terms.md "Exactly once, across processes"). Every
 * claim runs in the caller's transaction: it locks the due rows FOR UPDATE SKIP LOCKED (another
 * process's claim is skipped, never waited for), found through the partial indexes on the
 * deadline, the condition re-checked on the locked row's latest version; a bounded batch.
 */
export abstract class TermStore {
  /** Live, settled volumes (available or attached) with `expires_at <= now` and no unfinished operation. */
  abstract claimExpiredVolumes(now: Date, limit: number): Promise<DueResource[]>;
  /** Live, settled servers (running or stopped, bought) with `expires_at <= now` and no unfinished vm.* / template.* operation. */
  abstract claimExpiredServers(now: Date, limit: number): Promise<DueResource[]>;
  /**
   * Live, not suspended volumes or servers whose `expires_at` is in (now, now + offset], whose
   * term is longer than the offset (the offset was crossed after the purchase or the last
   * renewal), and without a notice for (resource, expires_at, offset).
   */
  abstract claimNoticesDue(kind: 'volume' | 'server', now: Date, offsetS: number, limit: number): Promise<NoticeDue[]>;
  /** Records the notices sent (the primary key keeps one per (resource, expires_at, offset)); the ids actually recorded. */
  abstract recordNotices(notices: readonly { resourceId: string; orgId: string; expiresAt: Date; offsetS: number; sentAt: Date }[]): Promise<Set<string>>;
  /** Suspended volumes with `release_at <= now` and no unfinished operation. */
  abstract claimReleasableVolumes(now: Date, limit: number): Promise<DueResource[]>;
  /** Suspended servers with `release_at <= now` and no unfinished vm.* / template.* operation. */
  abstract claimReleasableServers(now: Date, limit: number): Promise<DueResource[]>;
  /** The released volume becomes `deleting`, `deleted_reason: "expired"` (its volume.delete deletes the disk). */
  abstract markVolumeReleasing(id: string): Promise<void>;
  /** The volume becomes `suspended` (its server kept until its volume.suspend detaches it). */
  abstract markVolumeSuspended(id: string, suspendedAt: Date, releaseAt: Date, previousServerId: string | null): Promise<void>;
  abstract markServerSuspended(id: string, suspendedAt: Date, releaseAt: Date): Promise<void>;
  /** Locks the volume's row; its status and server, or undefined when it does not exist. */
  abstract lockVolume(id: string): Promise<{ status: string; serverId: string | null; deleted: boolean } | undefined>;
  abstract lockServer(id: string): Promise<{ status: string; deleted: boolean } | undefined>;
  /** volume.suspend's unmounting step done: mounted false. */
  abstract volumeUnmounted(id: string): Promise<void>;
  /** volume.suspend's detaching step done: no server, no mount path. */
  abstract volumeDetached(id: string): Promise<void>;
  /** Locks the resource's row; its organization, status and suspension times, or undefined when it does not exist. */
  abstract lockSuspension(kind: 'volume' | 'server', id: string): Promise<SuspensionState | undefined>;
  /** Moves a suspended resource's `release_at`. */
  abstract setReleaseAt(kind: 'volume' | 'server', id: string, releaseAt: Date): Promise<void>;
}

/** A resource's suspension, as the retention extension reads it under the row lock. */
export interface SuspensionState {
  orgId: string;
  status: string;
  deleted: boolean;
  suspendedAt: Date | null;
  releaseAt: Date | null;
}
