import { Page, PageCursor, toPage } from '../../../shared/kernel/pagination/cursor';
import { FirewallRuleRepository, NewFirewallRule, ServerDirectory, ServerEntry, SshKeyRepository } from '../application/access.ports';
import { FirewallRule } from '../domain/firewall-rule';
import { SshKey } from '../domain/ssh-key';

/** Cursor text of a Date (microseconds as the database writes them). */
const cursorOf = (createdAt: Date, id: string): PageCursor => ({ createdAt: createdAt.toISOString().replace('Z', '000Z'), id });
const newestFirst = (a: { createdAt: Date; id: string }, b: { createdAt: Date; id: string }) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1);
const oldestFirst = (a: { createdAt: Date; id: string }, b: { createdAt: Date; id: string }) => -newestFirst(a, b);
const after = (c: PageCursor | undefined, x: { createdAt: Date; id: string }, dir: 1 | -1) => {
  if (!c) return true;
  const cmp = oldestFirst(x, { createdAt: new Date(c.createdAt), id: c.id });
  return dir === 1 ? cmp > 0 : cmp < 0;
};

/** SSH keys in memory, with the unique fingerprint and name of the table. */
export class InMemorySshKeys extends SshKeyRepository {
  readonly keys: SshKey[] = [];
  locks = 0;

  async lockOrganization(): Promise<void> {
    this.locks++;
  }
  async count(orgId: string): Promise<number> {
    return this.keys.filter((k) => k.orgId === orgId).length;
  }
  async findBy(orgId: string, column: 'fingerprint' | 'name', value: string): Promise<SshKey | undefined> {
    const key = this.keys.find((k) => k.orgId === orgId && k[column] === value);
    return key && { ...key };
  }
  async insert(key: SshKey): Promise<SshKey | undefined> {
    if (this.keys.some((k) => k.orgId === key.orgId && (k.fingerprint === key.fingerprint || k.name === key.name))) return undefined;
    this.keys.push({ ...key });
    return { ...key };
  }
  async get(orgId: string, id: string): Promise<SshKey | undefined> {
    const key = this.keys.find((k) => k.orgId === orgId && k.id === id);
    return key && { ...key };
  }
  async list(orgId: string, filter: { fingerprint?: string; name?: string }, limit: number, cursor?: PageCursor): Promise<Page<SshKey>> {
    const rows = this.keys
      .filter((k) => k.orgId === orgId && (filter.fingerprint === undefined || k.fingerprint === filter.fingerprint) && (filter.name === undefined || k.name === filter.name))
      .filter((k) => after(cursor, k, -1))
      .sort(newestFirst)
      .slice(0, limit + 1);
    return toPage(rows, limit, (k) => cursorOf(k.createdAt, k.id), (k) => ({ ...k }));
  }
  async rename(orgId: string, id: string, name: string): Promise<SshKey | undefined> {
    const key = this.keys.find((k) => k.orgId === orgId && k.id === id);
    if (key) key.name = name;
    return key && { ...key };
  }
  async delete(orgId: string, id: string): Promise<SshKey | undefined> {
    const i = this.keys.findIndex((k) => k.orgId === orgId && k.id === id);
    return i < 0 ? undefined : this.keys.splice(i, 1)[0];
  }
  async findMany(orgId: string, ids: string[]): Promise<SshKey[]> {
    return this.keys.filter((k) => k.orgId === orgId && ids.includes(k.id)).map((k) => ({ ...k }));
  }
}

type StoredRule = FirewallRule & { digest: string };
/** A rule as read: without the digest, a copy. */
const read = ({ digest: _digest, ...rule }: StoredRule): FirewallRule => ({ ...rule, sources: [...rule.sources], destinations: [...rule.destinations] });

/** Firewall rules in memory, with the unique digest of the table. */
export class InMemoryFirewallRules extends FirewallRuleRepository {
  readonly rules: StoredRule[] = [];
  private seq = 0;

  constructor(private readonly now: () => Date = () => new Date()) {
    super();
  }

  async lockOrganization(): Promise<void> {}
  async count(orgId: string): Promise<number> {
    return this.rules.filter((r) => r.orgId === orgId).length;
  }
  async findByDigest(orgId: string, digest: string): Promise<FirewallRule | undefined> {
    const rule = this.rules.find((r) => r.orgId === orgId && r.digest === digest);
    return rule && read(rule);
  }
  async insert(rule: NewFirewallRule): Promise<FirewallRule | undefined> {
    if (this.rules.some((r) => r.orgId === rule.orgId && r.digest === rule.digest)) return undefined;
    const { digest, ...rest } = rule;
    // Distinct instants, in insertion order, as the database's now() of successive transactions.
    const stored = { ...rest, createdAt: new Date(this.now().getTime() + this.seq++), digest };
    this.rules.push(stored);
    return read(stored);
  }
  async get(orgId: string, id: string): Promise<FirewallRule | undefined> {
    const rule = this.rules.find((r) => r.orgId === orgId && r.id === id);
    return rule && read(rule);
  }
  async list(orgId: string, serverId: string | undefined, limit: number, cursor?: PageCursor): Promise<Page<FirewallRule>> {
    const rows = this.rules
      .filter((r) => r.orgId === orgId && (serverId === undefined || r.serverId === serverId))
      .filter((r) => after(cursor, r, 1))
      .sort(oldestFirst)
      .slice(0, limit + 1);
    return toPage(rows, limit, (r) => cursorOf(r.createdAt, r.id), read);
  }
  async inForce(orgId: string, serverId: string): Promise<FirewallRule[]> {
    return this.rules.filter((r) => r.orgId === orgId && (r.serverId === null || r.serverId === serverId)).sort(oldestFirst).map(read);
  }
  async delete(orgId: string, id: string): Promise<FirewallRule | undefined> {
    const i = this.rules.findIndex((r) => r.orgId === orgId && r.id === id);
    return i < 0 ? undefined : read(this.rules.splice(i, 1)[0]);
  }
  async deleteOfServer(orgId: string, serverId: string): Promise<FirewallRule[]> {
    const gone = this.rules.filter((r) => r.orgId === orgId && r.serverId === serverId).sort(oldestFirst);
    for (const r of gone) this.rules.splice(this.rules.indexOf(r), 1);
    return gone.map(read);
  }
}

/** Servers by organization: `live` false once deleted. */
export class InMemoryServerDirectory extends ServerDirectory {
  constructor(readonly servers: (ServerEntry & { orgId: string })[] = []) {
    super();
  }
  async find(orgId: string, serverId: string): Promise<ServerEntry | undefined> {
    const s = this.servers.find((x) => x.orgId === orgId && x.id === serverId);
    return s && { id: s.id, live: s.live };
  }
}
