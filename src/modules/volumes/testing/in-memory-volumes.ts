import { conflict } from '../../../shared/kernel/errors/domain-error';
import { Page, PageCursor, toPage } from '../../../shared/kernel/pagination/cursor';
import { NewVolume, ServerRepository, VolumeChanges, VolumeRepository } from '../application/volumes.port';
import { RenewedTerms } from '../../prepaid/domain/term';
import { Server } from '../domain/server';
import { Volume, VolumeFilter, matchesFilter } from '../domain/volume';
import { nameTaken } from '../domain/volume-attributes';

const cursorText = (d: Date): string => d.toISOString().replace('Z', '000Z');

/** Volumes in memory; locking is a no-op (unit tests run one thing at a time). */
export class InMemoryVolumeRepository extends VolumeRepository {
  readonly volumes = new Map<string, Volume>();

  constructor(
    private readonly servers?: InMemoryServerRepository,
    private readonly now: () => Date = () => new Date(),
  ) {
    super();
  }

  /** Puts a volume in as it is (tests arrange any state this way). */
  put(volume: Volume): Volume {
    this.volumes.set(volume.id, { ...volume });
    return volume;
  }

  async purchaseRoom(orgId: string, name: string): Promise<{ nameTaken: boolean; freeGb: number | null }> {
    const taken = [...this.volumes.values()].some((v) => v.orgId === orgId && v.name === name && v.deletedAt === null);
    return { nameTaken: taken, freeGb: null };
  }

  async create(v: NewVolume): Promise<Volume> {
    if (this.volumes.has(v.id)) throw conflict(`Volume ${v.id} exists already`);
    if (this.nameUsed(v.orgId, v.name, v.id)) throw nameTaken(v.name);
    const { serverId, autoRenew, ...rest } = v;
    const server = serverId ? await this.servers?.findInOrg(v.orgId, serverId) : undefined;
    return this.put({ ...rest, autoRenew: autoRenew && { enabled: autoRenew.enabled, termMonths: autoRenew.termMonths, lastAttempt: null, nextAttemptAt: null }, server: serverId ? { id: serverId, name: server?.name ?? '' } : null, createdAt: v.createdAt ?? this.now(), deletedAt: null });
  }

  async createMany(volumes: NewVolume[]): Promise<void> {
    const before = new Map(this.volumes);
    try {
      for (const v of volumes) await this.create(v);
    } catch (err) {
      // All or none, as one statement.
      this.volumes.clear();
      for (const [id, v] of before) this.volumes.set(id, v);
      throw err;
    }
  }

  async findInOrg(orgId: string, id: string): Promise<Volume | undefined> {
    const v = this.volumes.get(id);
    return v && v.orgId === orgId ? { ...v } : undefined;
  }

  lockInOrg(orgId: string, id: string): Promise<Volume | undefined> {
    return this.findInOrg(orgId, id);
  }

  async lockManyInOrgs(refs: readonly { orgId: string; id: string }[]): Promise<Volume[]> {
    const found: Volume[] = [];
    for (const r of refs) {
      const v = await this.findInOrg(r.orgId, r.id);
      if (v) found.push(v);
    }
    return found.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  async listInOrg(orgId: string, query: { limit: number; after?: PageCursor; filter?: VolumeFilter }): Promise<Page<Volume>> {
    // Newest first by (created_at, id), as the database orders them.
    const compare = (a: [string, string], b: [string, string]): number => (a[0] !== b[0] ? (a[0] < b[0] ? -1 : 1) : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0);
    const key = (v: Volume): [string, string] => [cursorText(v.createdAt), v.id];
    const after = query.after;
    const sorted = [...this.volumes.values()]
      .filter((v) => v.orgId === orgId && matchesFilter(v, query.filter ?? {}))
      .sort((a, b) => compare(key(b), key(a)))
      .filter((v) => !after || compare(key(v), [after.createdAt, after.id]) < 0);
    return toPage(sorted, query.limit, (v) => ({ createdAt: cursorText(v.createdAt), id: v.id }), (v) => v);
  }

  async update(id: string, changes: VolumeChanges): Promise<void> {
    const v = this.volumes.get(id);
    if (!v) throw new Error(`Volume ${id} does not exist`);
    if (changes.name !== undefined && this.nameUsed(v.orgId, changes.name, id)) throw nameTaken(changes.name);
    this.volumes.set(id, {
      ...v,
      name: changes.name ?? v.name,
      note: changes.note === undefined ? v.note : changes.note,
      labels: changes.labels ? { ...changes.labels } : v.labels,
      deleteProtection: changes.deleteProtection ?? v.deleteProtection,
      autoRenew: changes.autoRenew
        ? { enabled: changes.autoRenew.enabled, termMonths: changes.autoRenew.termMonths, lastAttempt: v.autoRenew?.lastAttempt ?? null, nextAttemptAt: null }
        : v.autoRenew,
    });
  }

  /** What the database's unique index on (org_id, name) among volumes not deleted refuses. */
  private nameUsed(orgId: string, name: string, exceptId: string): boolean {
    return [...this.volumes.values()].some((o) => o.orgId === orgId && o.name === name && !o.deletedAt && o.id !== exceptId);
  }

  async markDeleting(id: string): Promise<void> {
    const v = this.volumes.get(id);
    if (!v) throw new Error(`Volume ${id} does not exist`);
    this.volumes.set(id, { ...v, status: 'deleting' });
  }

  async saveRenewal(id: string, terms: RenewedTerms): Promise<void> {
    const v = this.volumes.get(id);
    if (!v) throw new Error(`Volume ${id} does not exist`);
    const resumed = v.status === 'suspended' ? { status: v.server ? ('attached' as const) : ('available' as const), suspendedAt: null, releaseAt: null } : {};
    this.volumes.set(id, { ...v, termMonths: terms.termMonths, billing: terms.billing, expiresAt: terms.expiresAt, ...resumed });
  }

  async saveRenewals(renewals: readonly { id: string; terms: RenewedTerms }[]): Promise<void> {
    for (const r of renewals) await this.saveRenewal(r.id, r.terms);
  }
}

export class InMemoryServerRepository extends ServerRepository {
  readonly servers = new Map<string, Server>();

  async create(s: { id: string; orgId: string; name: string; regionId: string; zoneId: string }): Promise<Server> {
    if (this.servers.has(s.id)) throw conflict(`Server ${s.id} exists already`);
    const server: Server = { ...s, createdAt: new Date(), deletedAt: null };
    this.servers.set(s.id, server);
    return server;
  }

  /** Disks on each server or on their way to it (tests set it; the database adapter counts volumes and operations). */
  readonly slots = new Map<string, number>();

  async findInOrg(orgId: string, id: string): Promise<Server | undefined> {
    const s = this.servers.get(id);
    return s && s.orgId === orgId ? s : undefined;
  }

  async lockInOrg(orgId: string, id: string): Promise<Server | undefined> {
    const s = await this.findInOrg(orgId, id);
    return s && !s.deletedAt ? s : undefined;
  }

  async slotsTaken(serverId: string): Promise<number> {
    return this.slots.get(serverId) ?? 0;
  }

  /** The vm.delete operation of each `deleting` server (tests set it with the status). */
  readonly deletions = new Map<string, string>();

  async deletion(serverId: string): Promise<{ operationId: string | null } | undefined> {
    return this.servers.get(serverId)?.status === 'deleting' ? { operationId: this.deletions.get(serverId) ?? null } : undefined;
  }
}
