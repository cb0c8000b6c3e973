import { AttachedDisk, DetachedDisk, ServerDeletions } from '../application/server-deletions.port';
import { ServerStatus } from '../domain/server';
import { InMemoryServers } from './in-memory-servers';

/** A disk row as the deletion sees it. */
export interface InMemoryDisk {
  volumeId: string;
  serverId: string | null;
  mountPath: string | null;
  mounted: boolean;
  status: 'attached' | 'available';
}

/**
 * ServerDeletions over InMemoryServers and a map of disks, for unit tests (locks are no-ops; what
 * the database's triggers do on deleted_at, status deleted and ipv4 null, is done here).
 */
export class InMemoryServerDeletions extends ServerDeletions {
  readonly disks = new Map<string, InMemoryDisk>();
  /** Unfinished operations by server id (tests set them). */
  readonly unfinished = new Map<string, string>();

  constructor(private readonly servers: InMemoryServers) {
    super();
  }

  async unfinishedOperation(serverId: string): Promise<string | undefined> {
    return this.unfinished.get(serverId);
  }

  async attachedDisks(serverId: string): Promise<AttachedDisk[]> {
    return [...this.disks.values()].filter((d) => d.serverId === serverId).sort((a, b) => (a.volumeId < b.volumeId ? -1 : 1)).map((d) => ({ volumeId: d.volumeId, mountPath: d.mountPath }));
  }

  async lockServer(): Promise<void> {}

  async lockReservedIp(): Promise<undefined> {
    return undefined;
  }

  async markDeleting(serverId: string): Promise<void> {
    this.set(serverId, { status: 'deleting' });
  }

  async restoreStatus(serverId: string, status: ServerStatus): Promise<void> {
    if (this.servers.byId.get(serverId)?.status === 'deleting') this.set(serverId, { status });
  }

  async markDeleted(serverId: string, at: Date): Promise<boolean> {
    const s = this.servers.byId.get(serverId);
    if (!s || s.deletedAt) return false;
    this.set(serverId, { status: 'deleted', deletedAt: at, ipv4: null });
    return true;
  }

  async detachDisks(serverId: string, volumeIds: readonly string[]): Promise<DetachedDisk[]> {
    const out: DetachedDisk[] = [];
    for (const id of [...volumeIds].sort()) {
      const d = this.disks.get(id);
      if (!d || d.serverId !== serverId) continue;
      out.push({ volumeId: id, mountPath: d.mountPath });
      this.disks.set(id, { ...d, serverId: null, mountPath: null, mounted: false, status: 'available' });
    }
    return out;
  }

  /** The vm.delete of each unsettled `deleting` server (tests set it). */
  readonly lastDeletion = new Map<string, string>();

  async unsettledAfter(after: string, limit: number): Promise<{ serverId: string; orgId: string; operationId: string }[]> {
    return [...this.servers.byId.values()]
      .filter((s) => s.status === 'deleting' && !s.deletedAt && s.id > after && !this.unfinished.has(s.id) && this.lastDeletion.has(s.id))
      .sort((a, b) => (a.id < b.id ? -1 : 1))
      .slice(0, limit)
      .map((s) => ({ serverId: s.id, orgId: s.orgId, operationId: this.lastDeletion.get(s.id)! }));
  }

  async setMounted(serverId: string, volumeId: string, mounted: boolean): Promise<void> {
    const d = this.disks.get(volumeId);
    if (d && d.serverId === serverId) this.disks.set(volumeId, { ...d, mounted });
  }

  private set(serverId: string, change: Partial<{ status: ServerStatus; deletedAt: Date; ipv4: string | null }>): void {
    const s = this.servers.byId.get(serverId);
    if (!s) throw new Error(`Server ${serverId} does not exist`);
    this.servers.byId.set(serverId, { ...s, ...change, volumeIds: [...this.disks.values()].filter((d) => d.serverId === serverId).map((d) => d.volumeId) });
  }
}
