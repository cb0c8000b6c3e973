import { conflict } from '../../../shared/kernel/errors/domain-error';
import { Page, PageCursor, toPage } from '../../../shared/kernel/pagination/cursor';
import { Accounts, MemberRecord, MembershipView, OrganizationRecord, UserRecord } from '../application/accounts.port';
import { ApiKeyRecord, Credentials, LAST_USED_RESOLUTION_MS, NewApiKey, SessionRecord } from '../application/credentials.port';
import { Role } from '../domain/principal';

/** Users, organizations and memberships in memory, for unit tests. */
export class InMemoryAccounts extends Accounts {
  readonly organizations = new Map<string, OrganizationRecord>();
  readonly users = new Map<string, UserRecord>();
  readonly rows: { orgId: string; userId: string; role: Role; joinedAt: Date }[] = [];
  private tick = 0;

  /** Increasing timestamps, so "first organization by membership date" is well defined. */
  private nextDate(): Date {
    this.tick += 1;
    return new Date(Date.UTC(2026, 0, 1) + this.tick * 1000);
  }

  async organizationExists(orgId: string): Promise<boolean> {
    return this.organizations.has(orgId);
  }

  async createOrganization(org: { id: string; name: string }): Promise<OrganizationRecord> {
    if (this.organizations.has(org.id)) throw conflict(`Organization ${org.id} exists already`);
    const record = { ...org, createdAt: this.nextDate() };
    this.organizations.set(org.id, record);
    return record;
  }

  async findUserByEmail(email: string): Promise<UserRecord | undefined> {
    return [...this.users.values()].find((u) => u.email === email);
  }

  async createUser(user: { id: string; email: string; passwordHash: string }): Promise<UserRecord> {
    if (await this.findUserByEmail(user.email)) throw conflict('A user with this email exists already');
    const record = { ...user, createdAt: this.nextDate() };
    this.users.set(user.id, record);
    return record;
  }

  async addMember(orgId: string, userId: string, role: Role, joinedAt?: Date): Promise<void> {
    if (this.rows.some((m) => m.orgId === orgId && m.userId === userId)) throw conflict(`User ${userId} is a member of ${orgId} already`);
    this.rows.push({ orgId, userId, role, joinedAt: joinedAt ?? this.nextDate() });
  }

  async membership(userId: string, orgId: string): Promise<Role | undefined> {
    return this.rows.find((m) => m.userId === userId && m.orgId === orgId)?.role;
  }

  async memberships(userId: string): Promise<MembershipView[]> {
    return this.rows
      .filter((m) => m.userId === userId)
      .sort((a, b) => a.joinedAt.getTime() - b.joinedAt.getTime() || a.orgId.localeCompare(b.orgId))
      .map((m) => ({ organization: this.organizations.get(m.orgId)!, role: m.role, joinedAt: m.joinedAt }));
  }

  /** One caller at a time in memory: nothing to lock. */
  async lockOrganization(): Promise<void> {}

  async members(orgId: string): Promise<MemberRecord[]> {
    return this.rows
      .filter((m) => m.orgId === orgId)
      .sort((a, b) => a.joinedAt.getTime() - b.joinedAt.getTime() || a.userId.localeCompare(b.userId))
      .map((m) => ({ userId: m.userId, email: this.users.get(m.userId)!.email, role: m.role, joinedAt: m.joinedAt }));
  }

  async member(orgId: string, userId: string): Promise<MemberRecord | undefined> {
    return (await this.members(orgId)).find((m) => m.userId === userId);
  }

  async countOwners(orgId: string): Promise<number> {
    return this.rows.filter((m) => m.orgId === orgId && m.role === 'owner').length;
  }

  async setRole(orgId: string, userId: string, role: Role): Promise<void> {
    const row = this.rows.find((m) => m.orgId === orgId && m.userId === userId);
    if (row) row.role = role;
  }

  async removeMember(orgId: string, userId: string): Promise<void> {
    const i = this.rows.findIndex((m) => m.orgId === orgId && m.userId === userId);
    if (i >= 0) this.rows.splice(i, 1);
  }
}

/** API keys and sessions in memory, keyed by the hex of their token hash, for unit tests. */
export class InMemoryCredentials extends Credentials {
  readonly apiKeys = new Map<string, ApiKeyRecord & { tokenHash: string }>();
  readonly sessions = new Map<string, SessionRecord & { tokenHash: string }>();

  async findApiKeyByHash(hash: Buffer): Promise<ApiKeyRecord | undefined> {
    // A copy, as a database read is: changing it changes nothing stored.
    const found = [...this.apiKeys.values()].find((k) => k.tokenHash === hash.toString('hex'));
    return found && { ...found };
  }

  async findSessionByHash(hash: Buffer): Promise<SessionRecord | undefined> {
    return [...this.sessions.values()].find((s) => s.tokenHash === hash.toString('hex'));
  }

  /** Writes of last_used_at, for tests. */
  touches = 0;

  async countActiveApiKeysForUpdate(orgId: string, now: Date): Promise<number> {
    return [...this.apiKeys.values()].filter((k) => k.orgId === orgId && !k.revokedAt && (!k.expiresAt || k.expiresAt > now)).length;
  }

  async createApiKey(key: NewApiKey): Promise<ApiKeyRecord> {
    const record = {
      id: key.id,
      orgId: key.orgId,
      name: key.name,
      scopes: key.scopes,
      tokenPrefix: key.tokenPrefix,
      createdAt: new Date(),
      createdBy: key.createdBy,
      expiresAt: key.expiresAt,
      lastUsedAt: null,
      revokedAt: null,
      tokenHash: key.tokenHash.toString('hex'),
    };
    this.apiKeys.set(key.id, record);
    return record;
  }

  async listApiKeys(orgId: string, limit: number, after: PageCursor | undefined): Promise<Page<ApiKeyRecord>> {
    const cursorOf = (k: ApiKeyRecord): PageCursor => ({ createdAt: k.createdAt.toISOString().replace('Z', '000Z'), id: k.id });
    const key = (k: ApiKeyRecord) => `${cursorOf(k).createdAt}|${k.id}`;
    const rows = [...this.apiKeys.values()]
      .filter((k) => k.orgId === orgId && (!after || key(k) < `${after.createdAt}|${after.id}`))
      .sort((a, b) => (key(a) < key(b) ? 1 : -1));
    return toPage(rows.slice(0, limit + 1), limit, cursorOf, (k) => k);
  }

  async touchApiKey(id: string, at: Date): Promise<void> {
    const key = this.apiKeys.get(id);
    if (key && (!key.lastUsedAt || at.getTime() - key.lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS)) {
      key.lastUsedAt = at;
      this.touches += 1;
    }
  }

  async revokeApiKey(id: string, orgId: string | undefined, at: Date): Promise<ApiKeyRecord | undefined> {
    const key = this.apiKeys.get(id);
    if (!key || (orgId !== undefined && key.orgId !== orgId)) return undefined;
    key.revokedAt ??= at;
    return key;
  }

  async activeApiKeysCreatedBy(orgId: string, userId: string, now: Date): Promise<ApiKeyRecord[]> {
    return [...this.apiKeys.values()].filter((k) => k.orgId === orgId && k.createdBy === userId && !k.revokedAt && (!k.expiresAt || k.expiresAt > now));
  }

  async createSession(session: { id: string; userId: string; tokenHash: Buffer; expiresAt: Date }): Promise<SessionRecord> {
    const record = { id: session.id, userId: session.userId, createdAt: new Date(), expiresAt: session.expiresAt, revokedAt: null, tokenHash: session.tokenHash.toString('hex') };
    this.sessions.set(session.id, record);
    return record;
  }

  async revokeSession(id: string, at: Date): Promise<void> {
    const session = this.sessions.get(id);
    if (session) session.revokedAt ??= at;
  }

  async purgeExpiredSessions(now: Date, limit: number): Promise<number> {
    const expired = [...this.sessions.values()].filter((s) => s.expiresAt.getTime() <= now.getTime()).slice(0, limit);
    for (const s of expired) this.sessions.delete(s.id);
    return expired.length;
  }
}
