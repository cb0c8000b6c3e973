import { conflict } from '../../../shared/kernel/errors/domain-error';
import { Accounts, MembershipView, OrganizationRecord, UserRecord } from '../application/accounts.port';
import { ApiKeyRecord, Credentials, SessionRecord } from '../application/credentials.port';
import { Role, Scope } from '../domain/principal';

/** Users, organizations and memberships in memory, for unit tests. */
export class InMemoryAccounts extends Accounts {
  readonly organizations = new Map<string, OrganizationRecord>();
  readonly users = new Map<string, UserRecord>();
  readonly members: { orgId: string; userId: string; role: Role; joinedAt: Date }[] = [];
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
    if (this.members.some((m) => m.orgId === orgId && m.userId === userId)) throw conflict(`User ${userId} is a member of ${orgId} already`);
    this.members.push({ orgId, userId, role, joinedAt: joinedAt ?? this.nextDate() });
  }

  async membership(userId: string, orgId: string): Promise<Role | undefined> {
    return this.members.find((m) => m.userId === userId && m.orgId === orgId)?.role;
  }

  async memberships(userId: string): Promise<MembershipView[]> {
    return this.members
      .filter((m) => m.userId === userId)
      .sort((a, b) => a.joinedAt.getTime() - b.joinedAt.getTime() || a.orgId.localeCompare(b.orgId))
      .map((m) => ({ organization: this.organizations.get(m.orgId)!, role: m.role, joinedAt: m.joinedAt }));
  }
}

/** API keys and sessions in memory, keyed by the hex of their token hash, for unit tests. */
export class InMemoryCredentials extends Credentials {
  readonly apiKeys = new Map<string, ApiKeyRecord & { tokenHash: string }>();
  readonly sessions = new Map<string, SessionRecord & { tokenHash: string }>();

  async findApiKeyByHash(hash: Buffer): Promise<ApiKeyRecord | undefined> {
    return [...this.apiKeys.values()].find((k) => k.tokenHash === hash.toString('hex'));
  }

  async findSessionByHash(hash: Buffer): Promise<SessionRecord | undefined> {
    return [...this.sessions.values()].find((s) => s.tokenHash === hash.toString('hex'));
  }

  async countActiveApiKeysForUpdate(orgId: string): Promise<number> {
    return [...this.apiKeys.values()].filter((k) => k.orgId === orgId && !k.revokedAt).length;
  }

  async createApiKey(key: { id: string; orgId: string; name: string; scopes: Scope[]; tokenHash: Buffer; createdBy: string | null }): Promise<ApiKeyRecord> {
    const record = { id: key.id, orgId: key.orgId, name: key.name, scopes: key.scopes, createdAt: new Date(), revokedAt: null, tokenHash: key.tokenHash.toString('hex') };
    this.apiKeys.set(key.id, record);
    return record;
  }

  async revokeApiKey(id: string, orgId: string | undefined, at: Date): Promise<ApiKeyRecord | undefined> {
    const key = this.apiKeys.get(id);
    if (!key || (orgId !== undefined && key.orgId !== orgId)) return undefined;
    key.revokedAt ??= at;
    return key;
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
