import { InMemoryAuditTrail } from '../../src/modules/audit/testing/in-memory-audit-trail';
import { CreateApiKey, MAX_API_KEYS_PER_ORG, OPERATOR, RevokeApiKey } from '../../src/modules/auth/application/api-keys.use-cases';
import { Authenticate } from '../../src/modules/auth/application/authenticate.use-case';
import { CredentialCache } from '../../src/modules/auth/application/credential-cache';
import { PurgeExpiredSessions } from '../../src/modules/auth/application/purge-expired-sessions.use-case';
import { ChangeMemberRole, RemoveMember } from '../../src/modules/auth/application/members.use-cases';
import { LogIn, LogOut, SESSION_LIFETIME_MS, SignUp } from '../../src/modules/auth/application/sessions.use-cases';
import { decodeAuditCursor, encodeAuditCursor, parseAuditFilter } from '../../src/modules/audit/domain/audit-log';
import { ADMIN_ROLES, ANY_ROLE, Principal, Role, Scope, WRITER_ROLES, checkAccess, grants } from '../../src/modules/auth/domain/principal';
import { DUMMY_PASSWORD_HASH, hashPassword, hashToken, newApiKeyToken, newSessionToken, tokenKind, verifyPassword } from '../../src/modules/auth/domain/tokens';
import { InMemoryAccounts, InMemoryCredentials } from '../../src/modules/auth/testing/in-memory-auth';
import { InMemoryUnitOfWork } from '../../src/shared/database/in-memory-unit-of-work';
import { FixedClock } from '../../src/shared/kernel/clock/clock';
import { DomainError } from '../../src/shared/kernel/errors/domain-error';

const NOW = new Date('2026-11-21T10:00:00.000Z');

async function failure(promise: Promise<unknown>): Promise<{ code: string; message: string; details?: unknown }> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof DomainError) return { code: err.code, message: err.message, ...(err.details ? { details: err.details } : {}) };
    throw err;
  }
  throw new Error('expected a DomainError, got success');
}

function setup() {
  const clock = new FixedClock(NOW);
  const accounts = new InMemoryAccounts();
  const credentials = new InMemoryCredentials();
  const audit = new InMemoryAuditTrail();
  const uow = new InMemoryUnitOfWork();
  // One cache per process, as the app module provides it: a revocation or logout evicts what authentication kept.
  const cache = new CredentialCache();
  return {
    clock,
    accounts,
    credentials,
    audit,
    authenticate: new Authenticate(credentials, accounts, clock, cache),
    signUp: new SignUp(uow, accounts, credentials, audit, clock),
    logIn: new LogIn(uow, accounts, credentials, audit, clock),
    logOut: new LogOut(uow, credentials, audit, clock, cache),
    createKey: new CreateApiKey(uow, accounts, credentials, audit, clock),
    revokeKey: new RevokeApiKey(uow, credentials, audit, clock, cache),
    purgeSessions: new PurgeExpiredSessions(credentials, clock),
    change: new ChangeMemberRole(uow, accounts, audit, credentials, clock, cache),
    remove: new RemoveMember(uow, accounts, audit, credentials, clock, cache),
  };
}

describe('tokens and passwords', () => {
  it('tells API keys from sessions by prefix and refuses anything else', () => {
    expect(tokenKind(newApiKeyToken())).toBe('api_key');
    expect(tokenKind(newSessionToken())).toBe('session');
    expect(newApiKeyToken()).toMatch(/^cds_live_[A-Za-z0-9]{40}$/);
    expect(newSessionToken()).toMatch(/^cds_sess_[A-Za-z0-9]{40}$/);
    for (const bad of ['cds_live_short', 'cds_test_' + 'a'.repeat(40), 'cds_live_' + 'a'.repeat(39) + '-', '', 'Bearer']) {
      expect(tokenKind(bad)).toBeUndefined();
    }
  });

  it('stores tokens as SHA-256 and passwords as salted scrypt', async () => {
    expect(hashToken('cds_live_x').length).toBe(32);
    const a = await hashPassword('a long password');
    const b = await hashPassword('a long password');
    expect(a).toMatch(/^scrypt\$16384\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    expect(a).not.toBe(b);
    expect(a).not.toContain('a long password');
    expect(await verifyPassword('a long password', a)).toBe(true);
    expect(await verifyPassword('a long passwore', a)).toBe(false);
    expect(await verifyPassword('anything', DUMMY_PASSWORD_HASH)).toBe(false);
  });
});

describe('checkAccess: scope for API keys, role for sessions, sessions-only routes', () => {
  const key = (scopes: Scope[]): Principal => ({ kind: 'api_key', orgId: 'org_a', credentialId: 'key_a', userId: null, role: null, scopes });
  const session = (role: 'owner' | 'admin' | 'developer' | 'viewer'): Principal => ({ kind: 'session', orgId: 'org_a', credentialId: 'ses_a', userId: 'usr_a', role, scopes: [] });
  const write = { scope: 'vm:write' as const, roles: WRITER_ROLES };

  it('lets an API key through only with the scope the route names', () => {
    expect(checkAccess(key(['vm:read', 'vm:write']), write)).toEqual({ allowed: true });
    expect(checkAccess(key(['vm:read']), write)).toEqual({ allowed: false, reason: 'The API key lacks the scope vm:write' });
    expect(checkAccess(key(['vm:read']), { scope: 'vm:read', roles: ANY_ROLE })).toEqual({ allowed: true });
    expect(checkAccess(key(['vm:read', 'vm:write']), { roles: ADMIN_ROLES })).toEqual({ allowed: false, reason: 'This endpoint is not available to API keys' });
    expect(checkAccess(key(['vm:read', 'vm:write']), { sessionOnly: true })).toEqual({
      allowed: false,
      reason: 'This endpoint is for sessions only; API keys cannot use it',
    });
  });

  it('takes a write scope to include its read scope, and nothing else to imply anything', () => {
    expect(checkAccess(key(['vm:write']), { scope: 'vm:read', roles: ANY_ROLE })).toEqual({ allowed: true });
    expect(checkAccess(key(['billing:write']), { scope: 'billing:read', roles: ANY_ROLE })).toEqual({ allowed: true });
    expect(checkAccess(key(['vm:write']), { scope: 'billing:read', roles: ANY_ROLE })).toEqual({ allowed: false, reason: 'The API key lacks the scope billing:read' });
    expect(checkAccess(key(['billing:read']), { scope: 'billing:write', roles: ANY_ROLE })).toEqual({ allowed: false, reason: 'The API key lacks the scope billing:write' });
    expect(checkAccess(key(['webhooks:write', 'billing:write']), { scope: 'audit:read', roles: ANY_ROLE })).toEqual({ allowed: false, reason: 'The API key lacks the scope audit:read' });
    expect(grants(['vm:write'], 'vm:read')).toBe(true);
    expect(grants(['vm:read'], 'vm:write')).toBe(false);
  });

  it('lets an API key through a route two scopes open with either of them (anyScope)', () => {
    const either = { anyScope: ['vm:read', 'billing:read'] as const, roles: ANY_ROLE };
    expect(checkAccess(key(['billing:read']), either)).toEqual({ allowed: true });
    expect(checkAccess(key(['vm:write']), either)).toEqual({ allowed: true });
    expect(checkAccess(key(['audit:read']), either)).toEqual({ allowed: false, reason: 'The API key lacks the scope vm:read or billing:read' });
  });

  it('lets a session through only with one of the roles the route names', () => {
    for (const role of ['developer', 'admin', 'owner'] as const) expect(checkAccess(session(role), write)).toEqual({ allowed: true });
    expect(checkAccess(session('viewer'), write)).toEqual({ allowed: false, reason: 'Role viewer may not do this; it needs one of: developer, admin, owner' });
    expect(checkAccess(session('viewer'), { scope: 'vm:read', roles: ANY_ROLE })).toEqual({ allowed: true });
    expect(checkAccess(session('viewer'), { sessionOnly: true })).toEqual({ allowed: true });
    expect(checkAccess(session('developer'), { roles: ADMIN_ROLES }).allowed).toBe(false);
  });
});

describe('Authenticate', () => {
  it('refuses missing, malformed, unknown, revoked and expired tokens with unauthorized', async () => {
    const s = setup();
    await s.accounts.createOrganization({ id: 'org_a', name: 'A' });
    const { token: keyToken, key } = await s.createKey.execute({ orgId: 'org_a', name: 'ci', scopes: ['vm:read'] }, OPERATOR);

    expect(await failure(s.authenticate.identify(undefined))).toEqual({ code: 'unauthorized', message: 'Missing Authorization header; send "Authorization: Bearer <token>"' });
    for (const header of [`Basic ${keyToken}`, 'Bearer', `Bearer ${keyToken} extra`, keyToken]) {
      expect(await failure(s.authenticate.identify(header))).toEqual({ code: 'unauthorized', message: 'Malformed Authorization header; expected "Bearer <token>"' });
    }
    expect(await failure(s.authenticate.identify('Bearer cds_live_short'))).toEqual({ code: 'unauthorized', message: 'Invalid token' });
    expect(await failure(s.authenticate.identify(`Bearer ${newApiKeyToken()}`))).toEqual({ code: 'unauthorized', message: 'Invalid token' });
    expect(await failure(s.authenticate.identify(`Bearer ${newSessionToken()}`))).toEqual({ code: 'unauthorized', message: 'Invalid token' });

    expect(await s.authenticate.identify(`Bearer ${keyToken}`)).toEqual({ kind: 'api_key', id: key.id, orgId: 'org_a', scopes: ['vm:read'] });
    expect(await s.authenticate.identify(`bearer ${keyToken}`)).toEqual({ kind: 'api_key', id: key.id, orgId: 'org_a', scopes: ['vm:read'] });
    await s.revokeKey.execute({ id: key.id }, OPERATOR);
    expect(await failure(s.authenticate.identify(`Bearer ${keyToken}`))).toEqual({ code: 'unauthorized', message: 'Invalid token' });

    const signed = await s.signUp.execute({ email: 'Me@Example.test', password: 'a long password', organizationName: 'Mine', ip: null });
    expect(await s.authenticate.identify(`Bearer ${signed.token}`)).toEqual({ kind: 'session', id: expect.stringMatching(/^ses_/), userId: signed.user.id });
    s.clock.advance(SESSION_LIFETIME_MS - 1);
    expect((await s.authenticate.identify(`Bearer ${signed.token}`)).kind).toBe('session');
    s.clock.advance(1);
    expect(await failure(s.authenticate.identify(`Bearer ${signed.token}`))).toEqual({ code: 'unauthorized', message: 'Invalid token' });
  });

  it('selects the organization: X-Org-ID for members, 403 alike for non-members and unknown ids, ignored with an API key, else the first membership', async () => {
    const s = setup();
    const me = await s.signUp.execute({ email: 'me@x.test', password: 'a long password', organizationName: 'Mine', ip: null });
    const other = await s.accounts.createOrganization({ id: 'org_other', name: 'Other' });
    const foreign = await s.accounts.createOrganization({ id: 'org_foreign', name: 'Foreign' });
    await s.accounts.addMember(other.id, me.user.id, 'viewer');
    const credential = await s.authenticate.identify(`Bearer ${me.token}`);

    expect(await s.authenticate.principalFor(credential, undefined)).toEqual({
      kind: 'session', orgId: me.organization.id, credentialId: credential.id, userId: me.user.id, role: 'owner', scopes: [],
    });
    expect(await s.authenticate.principalFor(credential, 'org_other')).toEqual({
      kind: 'session', orgId: 'org_other', credentialId: credential.id, userId: me.user.id, role: 'viewer', scopes: [],
    });
    const notMember = await failure(s.authenticate.principalFor(credential, foreign.id));
    const unknown = await failure(s.authenticate.principalFor(credential, 'org_nope'));
    expect(notMember).toEqual({ code: 'forbidden', message: 'X-Org-ID names an organization you are not a member of' });
    expect(unknown).toEqual(notMember);

    const { token } = await s.createKey.execute({ orgId: foreign.id, name: 'k', scopes: ['vm:read'] }, OPERATOR);
    const keyCredential = await s.authenticate.identify(`Bearer ${token}`);
    expect((await s.authenticate.principalFor(keyCredential, me.organization.id)).orgId).toBe(foreign.id);
    expect((await s.authenticate.execute(`Bearer ${token}`, 'org_nope')).orgId).toBe(foreign.id);
  });
});

describe('sessions: signup, login, logout', () => {
  it('answers a wrong password and an unknown email with the same error, and audits both', async () => {
    const s = setup();
    await s.signUp.execute({ email: 'me@x.test', password: 'a long password', organizationName: 'Mine', ip: '10.0.0.1' });
    const wrongPassword = await failure(s.logIn.execute({ email: 'me@x.test', password: 'not it at all', ip: '10.0.0.2' }));
    const unknownEmail = await failure(s.logIn.execute({ email: 'nobody@x.test', password: 'not it at all', ip: '10.0.0.3' }));
    expect(wrongPassword).toEqual({ code: 'invalid_credentials', message: 'Wrong email or password' });
    expect(unknownEmail).toEqual(wrongPassword);
    expect(s.audit.entries.filter((e) => e.action === 'auth.login_failed')).toEqual([
      { orgId: null, actorType: 'user', actorId: expect.stringMatching(/^usr_/), action: 'auth.login_failed', targetId: expect.stringMatching(/^login:[0-9a-f]{64}$/), ipAddress: '10.0.0.2', data: { reason: 'wrong_password' } },
      { orgId: null, actorType: 'anonymous', actorId: null, action: 'auth.login_failed', targetId: expect.stringMatching(/^login:[0-9a-f]{64}$/), ipAddress: '10.0.0.3', data: { reason: 'unknown_email' } },
    ]);
    expect(s.credentials.sessions.size).toBe(1);
  });

  it('logs in case-insensitively by email, for 24 hours, and logout revokes the session at once', async () => {
    const s = setup();
    const signed = await s.signUp.execute({ email: 'me@x.test', password: 'a long password', organizationName: 'Mine', ip: null });
    const login = await s.logIn.execute({ email: 'ME@X.test', password: 'a long password', ip: '10.0.0.9' });
    expect(login.expiresAt).toEqual(new Date(NOW.getTime() + SESSION_LIFETIME_MS));
    expect(login.organizations.map((m) => [m.organization.id, m.role])).toEqual([[signed.organization.id, 'owner']]);
    const principal = await s.authenticate.execute(`Bearer ${login.token}`, undefined);
    await s.logOut.execute(principal, '10.0.0.9');
    expect(await failure(s.authenticate.identify(`Bearer ${login.token}`))).toEqual({ code: 'unauthorized', message: 'Invalid token' });
    expect((await s.authenticate.identify(`Bearer ${signed.token}`)).kind).toBe('session');
    expect(s.audit.entries.at(-1)).toEqual({
      orgId: signed.organization.id, actorType: 'user', actorId: signed.user.id, action: 'auth.logout', targetId: principal.credentialId, ipAddress: '10.0.0.9',
    });
  });

  it('refuses logout to an API key', async () => {
    const s = setup();
    const principal: Principal = { kind: 'api_key', orgId: 'org_a', credentialId: 'key_a', userId: null, role: null, scopes: ['vm:read'] };
    expect(await failure(s.logOut.execute(principal, null))).toEqual({ code: 'forbidden', message: 'Only a session can log out' });
  });
});

describe('API keys', () => {
  it(`allows ${MAX_API_KEYS_PER_ORG} active keys per organization; revoked ones do not count`, async () => {
    const s = setup();
    await s.accounts.createOrganization({ id: 'org_a', name: 'A' });
    const ids: string[] = [];
    for (let i = 0; i < MAX_API_KEYS_PER_ORG; i++) ids.push((await s.createKey.execute({ orgId: 'org_a', name: `k${i}`, scopes: ['vm:read'] }, OPERATOR)).key.id);
    expect(await failure(s.createKey.execute({ orgId: 'org_a', name: 'one too many', scopes: ['vm:read'] }, OPERATOR))).toEqual({
      code: 'quota_exceeded',
      message: 'An organization may hold at most 20 active API keys; revoke one first',
      details: { limit: 20 },
    });
    await s.revokeKey.execute({ id: ids[0] }, OPERATOR);
    expect((await s.createKey.execute({ orgId: 'org_a', name: 'replacement', scopes: ['vm:write'] }, OPERATOR)).key.scopes).toEqual(['vm:write']);
  });
});

describe('PurgeExpiredSessions', () => {
  it('deletes the sessions whose 24 hours are over, in batches, and keeps the others', async () => {
    const s = setup();
    const first = await s.signUp.execute({ email: 'me@purge.test', password: 'a long password', organizationName: 'Mine', ip: null });
    s.clock.set(new Date(NOW.getTime() + 60_000));
    const second = await s.logIn.execute({ email: 'me@purge.test', password: 'a long password', ip: null });
    expect(s.credentials.sessions.size).toBe(2);

    s.clock.set(new Date(NOW.getTime() + SESSION_LIFETIME_MS - 1));
    expect(await s.purgeSessions.execute()).toBe(0);
    s.clock.set(new Date(NOW.getTime() + SESSION_LIFETIME_MS));
    expect(await s.purgeSessions.execute()).toBe(1);
    expect((await failure(s.authenticate.identify(`Bearer ${first.token}`))).message).toBe('Invalid token');
    expect((await s.authenticate.identify(`Bearer ${second.token}`)).kind).toBe('session');
    expect([...s.credentials.sessions.values()].map((x) => x.expiresAt)).toEqual([second.expiresAt]);
  });
});

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    if (err instanceof DomainError) return err.code;
    throw err;
  }
  return 'ok';
}

async function team(s: ReturnType<typeof setup>) {
  await s.accounts.createOrganization({ id: 'org_a', name: 'A' });
  const ids: Record<string, string> = {};
  for (const role of ['owner', 'admin', 'developer', 'viewer', 'outsider'] as const) {
    const u = await s.accounts.createUser({ id: `usr_${role}`, email: `${role}@a.test`, passwordHash: 'x' });
    ids[role] = u.id;
    if (role !== 'outsider') await s.accounts.addMember('org_a', u.id, role);
  }
  const as = (role: Role): Principal => ({ kind: 'session', orgId: 'org_a', credentialId: `ses_${role}`, userId: ids[role], role, scopes: [] });
  return { ids, as };
}

describe('members (in-memory adapters)', () => {
  it('admin manages non-owners; only an owner touches owner; the last owner stays', async () => {
    const s = setup();
    const { ids, as } = await team(s);
    // Joining is by invitation (test/e2e/invitations); here the outsider has accepted one as admin.
    await s.accounts.addMember('org_a', ids.outsider, 'admin');
    expect((await s.change.execute(as('admin'), ids.outsider, 'viewer', '10.0.0.1')).role).toBe('viewer');
    expect((await s.change.execute(as('admin'), ids.outsider, 'admin', null)).role).toBe('admin');
    expect(await code(s.change.execute(as('admin'), ids.owner, 'admin', null))).toBe('forbidden');
    expect(await code(s.change.execute(as('owner'), ids.owner, 'admin', null))).toBe('conflict');
    expect(await code(s.remove.execute(as('owner'), ids.owner, null))).toBe('conflict');
    expect(await code(s.remove.execute(as('viewer'), ids.developer, null))).toBe('forbidden');
    expect(await code(s.remove.execute(as('viewer'), ids.viewer, null))).toBe('ok');
    expect(await code(s.change.execute(as('owner'), 'usr_nobody', 'viewer', null))).toBe('not_found');
    await s.change.execute(as('owner'), ids.outsider, 'owner', null);
    expect(await code(s.change.execute(as('owner'), ids.owner, 'developer', null))).toBe('ok');
    expect(s.audit.entries.map((e) => `${e.action}:${e.targetId}:${JSON.stringify(e.data)}`)).toEqual([
      'member.role_change:usr_outsider:{"email":"outsider@a.test","from":"admin","to":"viewer","api_keys_kept":[],"api_keys_revoked":[]}',
      'member.role_change:usr_outsider:{"email":"outsider@a.test","from":"viewer","to":"admin"}',
      'member.remove:usr_viewer:{"email":"viewer@a.test","role":"viewer","api_keys_kept":[],"api_keys_revoked":[]}',
      'member.role_change:usr_outsider:{"email":"outsider@a.test","from":"admin","to":"owner"}',
      'member.role_change:usr_owner:{"email":"owner@a.test","from":"owner","to":"developer","api_keys_kept":[],"api_keys_revoked":[]}',
    ]);
    expect(s.audit.entries[0]).toMatchObject({ orgId: 'org_a', actorType: 'user', actorId: ids.admin, ipAddress: '10.0.0.1' });
  });

  it("uses the caller's role as it is under the lock, not as it was at authentication", async () => {
    const s = setup();
    const { ids, as } = await team(s);
    const staleAdmin = as('admin');
    await s.accounts.setRole('org_a', ids.admin, 'viewer');
    expect(await code(s.change.execute(staleAdmin, ids.developer, 'viewer', null))).toBe('forbidden');
  });
});

describe('API keys (in-memory adapters)', () => {
  it('an expired key is refused as an invalid token; last_used_at is written at most once a minute', async () => {
    const s = setup();
    await s.accounts.createOrganization({ id: 'org_a', name: 'A' });
    const { token, key } = await s.createKey.execute({ orgId: 'org_a', name: 'k', scopes: ['vm:read'], expiresAt: new Date(NOW.getTime() + 120_000) }, OPERATOR);
    expect(key.tokenPrefix).toBe(token.slice(0, 13));
    await s.authenticate.identify(`Bearer ${token}`);
    s.clock.advance(30_000);
    await s.authenticate.identify(`Bearer ${token}`);
    expect(s.credentials.touches).toBe(1);
    s.clock.advance(30_000);
    await s.authenticate.identify(`Bearer ${token}`);
    expect(s.credentials.touches).toBe(2);
    expect(s.credentials.apiKeys.get(key.id)!.lastUsedAt).toEqual(new Date(NOW.getTime() + 60_000));
    s.clock.advance(60_000);
    await expect(s.authenticate.identify(`Bearer ${token}`)).rejects.toEqual(new DomainError('unauthorized', 'Invalid token'));
    expect(await code(s.createKey.execute({ orgId: 'org_a', name: 'k', scopes: ['vm:read'], expiresAt: new Date(NOW.getTime()) }, OPERATOR))).toBe('invalid_request');
  });
});

describe('audit log query parsing', () => {
  it('reads exact actions and prefixes, ids, instants; the cursor round-trips and refuses anything else', () => {
    expect(parseAuditFilter({ action: 'volume.*' })).toEqual({ actionPrefix: 'volume.' });
    expect(parseAuditFilter({ action: 'api_key.create', actor_id: 'usr_1', target_id: 'key_1' })).toEqual({ action: 'api_key.create', actorId: 'usr_1', targetId: 'key_1' });
    expect(parseAuditFilter({ since: '2026-11-21T10:00:00+07:00' })).toEqual({ since: new Date('2026-11-21T03:00:00Z') });
    for (const action of ['*', 'volume.', '.*', 'Volume.create', 'a b', 'x.**']) expect(() => parseAuditFilter({ action })).toThrow(DomainError);
    expect(decodeAuditCursor(encodeAuditCursor({ seq: '12345' }))).toEqual({ seq: '12345' });
    for (const bad of ['', 'abc', Buffer.from('a1|0').toString('base64url'), Buffer.from('a1|99999999999999999999').toString('base64url')]) {
      expect(() => decodeAuditCursor(bad)).toThrow(DomainError);
    }
  });
});
