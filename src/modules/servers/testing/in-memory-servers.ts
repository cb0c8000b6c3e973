import { Page, PageCursor } from '../../../shared/kernel/pagination/cursor';
import { ServerChanges, ServerReads, ServerWrites } from '../application/servers.port';
import { Server, ServerFilter, nameTaken } from '../domain/server';

/** The cursor's instant: ISO with microseconds, as the database writes it. */
const micros = (d: Date): string => d.toISOString().replace(/Z$/, '000Z');

/** ServerReads and ServerWrites over a Map, for unit tests (locks are no-ops: one caller at a time). */
export class InMemoryServers {
  readonly byId = new Map<string, Server>();

  put(server: Server): void {
    this.byId.set(server.id, { ...server, labels: { ...server.labels }, volumeIds: [...server.volumeIds] });
  }

  readonly reads: ServerReads = new (class extends ServerReads {
    constructor(private readonly store: InMemoryServers) {
      super();
    }
    async findInOrg(orgId: string, id: string): Promise<Server | undefined> {
      const s = this.store.byId.get(id);
      return s && s.orgId === orgId ? { ...s, labels: { ...s.labels } } : undefined;
    }
    async findManyInOrgs(refs: readonly { orgId: string; id: string }[]): Promise<Server[]> {
      const found = await Promise.all(refs.map((r) => this.findInOrg(r.orgId, r.id)));
      return found.filter((s): s is Server => s !== undefined);
    }
    async listInOrg(orgId: string, query: { limit: number; after?: PageCursor; filter: ServerFilter }): Promise<Page<Server>> {
      const f = query.filter;
      const key = (s: Server) => `${micros(s.createdAt)}|${s.id}`;
      const rows = [...this.store.byId.values()]
        .filter((s) => s.orgId === orgId)
        .filter((s) => (f.status === undefined ? s.deletedAt === null : s.status === f.status))
        .filter((s) => (f.regionId === undefined || s.regionId === f.regionId) && (f.zoneId === undefined || s.zoneId === f.zoneId))
        .filter((s) => (f.name === undefined || s.name === f.name) && f.labels.every(([k, v]) => s.labels[k] === v))
        .sort((a, b) => (key(a) < key(b) ? 1 : -1))
        .filter((s) => !query.after || key(s) < `${query.after.createdAt}|${query.after.id}`);
      const items = rows.slice(0, query.limit);
      const last = items[items.length - 1];
      return { items, next: rows.length > query.limit && last ? { createdAt: micros(last.createdAt), id: last.id } : null };
    }
  })(this);

  readonly writes: ServerWrites = new (class extends ServerWrites {
    constructor(private readonly store: InMemoryServers) {
      super();
    }
    async lockInOrg(orgId: string, id: string): Promise<Server | undefined> {
      return this.store.reads.findInOrg(orgId, id);
    }
    async liveIdByName(orgId: string, name: string): Promise<string | undefined> {
      return [...this.store.byId.values()].find((s) => s.orgId === orgId && s.name === name && s.deletedAt === null)?.id;
    }
    async update(orgId: string, id: string, changes: ServerChanges): Promise<void> {
      const s = this.store.byId.get(id)!;
      if (changes.name !== undefined && (await this.liveIdByName(orgId, changes.name)) !== undefined) throw nameTaken(changes.name, undefined);
      this.store.byId.set(id, {
        ...s,
        name: changes.name ?? s.name,
        labels: changes.labels ?? s.labels,
        deleteProtection: changes.deleteProtection ?? s.deleteProtection,
      });
    }
  })(this);
}
