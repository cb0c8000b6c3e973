import { InMemoryAuditTrail } from '../../src/modules/audit/testing/in-memory-audit-trail';
import { decodeAuditCursor, encodeAuditCursor, parseAuditFilter } from '../../src/modules/audit/domain/audit-log';
import { CreateApiKey, OPERATOR } from '../../src/modules/auth/application/api-keys.use-cases';
import { Authenticate } from '../../src/modules/auth/application/authenticate.use-case';
import { AddMember, ChangeMemberRole, RemoveMember } from '../../src/modules/auth/application/members.use-cases';
import { Principal, Role } from '../../src/modules/auth/domain/principal';
import { InMemoryAccounts, InMemoryCredentials } from '../../src/modules/auth/testing/in-memory-auth';
import { InMemoryUnitOfWork } from '../../src/shared/database/in-memory-unit-of-work';
import { FixedClock } from '../../src/shared/kernel/clock/clock';
import { DomainError } from '../../src/shared/kernel/errors/domain-error';

const NOW = new Date('2026-11-21T10:00:00.000Z');

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    if (err instanceof DomainError) return err.code;
    throw err;
  }
  return 'ok';
}

function setup() {
  const clock = new FixedClock(NOW);
  const accounts = new InMemoryAccounts();
  const credentials = new InMemoryCredentials();
  const audit = new InMemoryAuditTrail();
  const uow = new InMemoryUnitOfWork();
  return {
    clock,
    accounts,
    credentials,
    audit,
    authenticate: new Authenticate(credentials, accounts, clock),
    createKey: new CreateApiKey(uow, accounts, credentials, audit, clock),
    add: new AddMember(uow, accounts, audit),
    change: new ChangeMemberRole(uow, accounts, audit),
    remove: new RemoveMember(uow, accounts, audit),
  };
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
    expect(await code(s.add.execute(as('admin'), { email: 'outsider@a.test', role: 'owner' }, null))).toBe('forbidden');
    expect(await code(s.add.execute(as('developer'), { email: 'outsider@a.test', role: 'viewer' }, null))).toBe('forbidden');
    expect(await code(s.add.execute(as('admin'), { email: 'ghost@a.test', role: 'viewer' }, null))).toBe('not_found');
    expect((await s.add.execute(as('admin'), { email: 'OUTSIDER@a.test', role: 'admin' }, '10.0.0.1')).role).toBe('admin');
    expect(await code(s.add.execute(as('owner'), { email: 'outsider@a.test', role: 'viewer' }, null))).toBe('conflict');
    expect(await code(s.change.execute(as('admin'), ids.owner, 'admin', null))).toBe('forbidden');
    expect(await code(s.change.execute(as('owner'), ids.owner, 'admin', null))).toBe('conflict');
    expect(await code(s.remove.execute(as('owner'), ids.owner, null))).toBe('conflict');
    expect(await code(s.remove.execute(as('viewer'), ids.developer, null))).toBe('forbidden');
    expect(await code(s.remove.execute(as('viewer'), ids.viewer, null))).toBe('ok');
    expect(await code(s.change.execute(as('owner'), 'usr_nobody', 'viewer', null))).toBe('not_found');
    await s.change.execute(as('owner'), ids.outsider, 'owner', null);
    expect(await code(s.change.execute(as('owner'), ids.owner, 'developer', null))).toBe('ok');
    expect(s.audit.entries.map((e) => `${e.action}:${e.targetId}:${JSON.stringify(e.data)}`)).toEqual([
      'member.add:usr_outsider:{"email":"outsider@a.test","role":"admin"}',
      'member.remove:usr_viewer:{"email":"viewer@a.test","role":"viewer"}',
      'member.role_change:usr_outsider:{"email":"outsider@a.test","from":"admin","to":"owner"}',
      'member.role_change:usr_owner:{"email":"owner@a.test","from":"owner","to":"developer"}',
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
