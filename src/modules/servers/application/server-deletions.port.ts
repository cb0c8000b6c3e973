import { ServerStatus } from '../domain/server';

/** A live disk on the server when its deletion is accepted: what `detaching_volumes` unmounts and detaches. */
export interface AttachedDisk {
  volumeId: string;
  mountPath: string | null;
}

/** A disk's row as the deletion left it (the audit row of its detach names them). */
export interface DetachedDisk {
  volumeId: string;
  mountPath: string | null;
}

/**
 * What DELETE /v1/servers/{id} and the vm.delete executor write and read on the database, in
 * the caller's transaction (servers.md "Power, renewal, deletion": the server, its disks, its
 * unfinished operations).
 */
export abstract class ServerDeletions {
  /**
   * The id of an unfinished (pending or running) operation naming the server in vm_id, of any
   * type (vm.*, template.*, and volume operations with it), the oldest first; undefined when none.
   */
  abstract unfinishedOperation(serverId: string): Promise<string | undefined>;
  /** The live volumes on the server (attached, or on their way off it), by id. */
  abstract attachedDisks(serverId: string): Promise<AttachedDisk[]>;
  /** Locks the server's row (FOR UPDATE) until the transaction ends. */
  abstract lockServer(serverId: string): Promise<void>;
  /**
   * The reserved address assigned to the server (its id and address), its reservation's row
   * locked after the server's (the order an assignment and an unassignment take); undefined when
   * none. Marking the server deleted frees it (a trigger leaves it `available`).
   */
  abstract lockReservedIp(serverId: string): Promise<{ id: string; ip: string } | undefined>;
  /** The deletion was accepted: `deleting` at once; a release (terms.md) records its reason now. */
  abstract markDeleting(serverId: string, reason?: 'expired'): Promise<void>;
  /** A failed deletion gives the server its former status back (only while it is still `deleting`). */
  abstract restoreStatus(serverId: string, status: ServerStatus): Promise<void>;
  /**
   * The deletion took effect: deleted_at (the row's triggers make it `deleted`, clear its ipv4 and
   * give its vCPUs back to the region). False when it was deleted already (nothing written).
   */
  abstract markDeleted(serverId: string, at: Date): Promise<boolean>;
  /**
   * Locks these volumes (id order) and leaves those still on the server `available` with no
   * server, no mount path, not mounted (data and term kept). The ones it changed, by id.
   */
  abstract detachDisks(serverId: string, volumeIds: readonly string[]): Promise<DetachedDisk[]>;
  /**
   * A page of `deleting` servers with no unfinished vm.delete (a deletion that failed while its
   * instance could not be read), by id after `after`: each with its latest vm.delete operation.
   */
  abstract unsettledAfter(after: string, limit: number): Promise<{ serverId: string; orgId: string; operationId: string }[]>;
  /** Records the provider's mount state of a volume still on the server. */
  abstract setMounted(serverId: string, volumeId: string, mounted: boolean): Promise<void>;
}
