import type { Response } from 'supertest';
import { OWNER_PASSWORD, apiToken, bearer } from '../support/fixtures';
import { ISO, KEY_ID, envelope, teamSeed } from '../support/accounts';
import { TestApp, startTestApp } from '../support/test-app';

type Role = 'owner' | 'admin' | 'developer' | 'viewer';

/**
 * lifecycle.md "Accounts": /v1/api-keys and /v1/members over HTTP (sessions only), on both
 * engines. Concurrency (quota under parallel creates, two owners demoting each other) is in
 * accounts-concurrency (PostgreSQL); a second server process in accounts-processes.
 */
describe('accounts: API keys and members over HTTP', () => {
  let t: TestApp;
  const session: Record<Role, string> = { owner: '', admin: '', developer: '', viewer: '' };
  const userId: Record<Role, string> = { owner: '', admin: '', developer: '', viewer: '' };
  const keyA = apiToken('a', 'rw');
  let spareUsers = 0;

  const login = async (email: string): Promise<string> => {
    const res = await t.http.post('/v1/auth/login').send({ email, password: OWNER_PASSWORD });
    expect(res.status).toBe(200);
    return res.body.token as string;
  };
  /** A user with an account of their own (signup), not in org_a. */
  const spareUser = async (): Promise<{ id: string; email: string; token: string }> => {
    const email = `spare${++spareUsers}@elsewhere.test`;
    const res = await t.http.post('/v1/auth/signup').send({ email, password: OWNER_PASSWORD, organization_name: `Spare ${spareUsers}` });
    expect(res.status).toBe(201);
    return { id: res.body.user.id, email, token: res.body.token };
  };
  const as = (role: Role) => bearer(session[role]);
  const ownerA = () => ({ ...as('owner'), 'X-Org-ID': 'org_a' });
  /** Joining is by invitation: `by` invites the user into org_a, and the user accepts with their session. */
  const join = async (u: { email: string; token: string }, role: Role, by: Record<string, string> = ownerA()) => {
    const invited = await t.http.post('/v1/invitations').set(by).send({ email: u.email, role });
    expect(invited.status).toBe(201);
    const accepted = await t.http.post('/v1/invitations/accept').set(bearer(u.token)).send({ token: invited.body.token });
    expect(accepted.status).toBe(200);
  };

  beforeAll(async () => {
    t = await startTestApp();
    await t.seed(teamSeed('a', 'b'));
    for (const [role, email] of [['owner', 'owner@a.test'], ['admin', 'admin@a.test'], ['developer', 'dev@a.test'], ['viewer', 'viewer@a.test']] as const) {
      session[role] = await login(email);
      userId[role] = (await t.sql<{ id: string }>('SELECT id FROM users WHERE email = $1', [email]))[0].id;
    }
  });
  afterAll(async () => t?.close());

  describe('every role and an API key on every endpoint (table)', () => {
    type Caller = Role | 'api_key';
    const callers: Caller[] = ['owner', 'admin', 'developer', 'viewer', 'api_key'];
    const auth = (c: Caller) => (c === 'api_key' ? bearer(keyA) : as(c));
    const freshKey = async () => (await t.http.post('/v1/api-keys').set(ownerA()).send({ name: 'tmp', scopes: ['vm:read'] })).body.api_key.id as string;
    const freshMember = async (role: Role = 'viewer') => {
      const u = await spareUser();
      await join(u, role);
      return u.id;
    };

    const table: { name: string; expected: Record<Caller, number>; call: (c: Caller) => Promise<{ status: number; body: { error?: { code: string } } }> }[] = [
      { name: 'POST /v1/api-keys', expected: { owner: 201, admin: 201, developer: 403, viewer: 403, api_key: 403 }, call: (c) => t.http.post('/v1/api-keys').set(auth(c)).send({ name: `by-${c}`, scopes: ['vm:read'] }) },
      { name: 'GET /v1/api-keys', expected: { owner: 200, admin: 200, developer: 403, viewer: 403, api_key: 403 }, call: (c) => t.http.get('/v1/api-keys').set(auth(c)) },
      { name: 'DELETE /v1/api-keys/{id}', expected: { owner: 204, admin: 204, developer: 403, viewer: 403, api_key: 403 }, call: async (c) => t.http.delete(`/v1/api-keys/${await freshKey()}`).set(auth(c)) },
      { name: 'GET /v1/members', expected: { owner: 200, admin: 200, developer: 200, viewer: 200, api_key: 403 }, call: (c) => t.http.get('/v1/members').set(auth(c)) },
      { name: 'POST /v1/members', expected: { owner: 201, admin: 201, developer: 403, viewer: 403, api_key: 403 }, call: async (c) => t.http.post('/v1/members').set(auth(c)).send({ email: (await spareUser()).email, role: 'viewer' }) },
      { name: 'PATCH /v1/members/{user_id}', expected: { owner: 200, admin: 200, developer: 403, viewer: 403, api_key: 403 }, call: async (c) => t.http.patch(`/v1/members/${await freshMember('developer')}`).set(auth(c)).send({ role: 'viewer' }) },
      { name: 'DELETE /v1/members/{user_id} (someone else)', expected: { owner: 204, admin: 204, developer: 403, viewer: 403, api_key: 403 }, call: async (c) => t.http.delete(`/v1/members/${await freshMember()}`).set(auth(c)) },
      { name: 'GET /v1/audit-log', expected: { owner: 200, admin: 200, developer: 403, viewer: 403, api_key: 403 }, call: (c) => t.http.get('/v1/audit-log').set(auth(c)) },
    ];

    for (const row of table) {
      it(`${row.name}: ${callers.map((c) => `${c} ${row.expected[c]}`).join(', ')}`, async () => {
        const got: Record<string, number> = {};
        for (const c of callers) {
          const res = await row.call(c);
          got[c] = res.status;
          if (res.status === 403) expect(res.body.error?.code).toBe('forbidden');
        }
        expect(got).toEqual(row.expected);
      });
    }

    it('an API key gets the session-only envelope', async () => {
      const res = await t.http.get('/v1/members').set(bearer(keyA));
      expect(res.body).toEqual(envelope(res, 'forbidden', 'This endpoint is for sessions only; API keys cannot use it'));
      expect(res.headers['x-ratelimit-limit']).toBe('600');
    });
  });

  describe('API keys', () => {
    it('creates a key: 201 {api_key, token}, the token works once shown, only its hash and 13-character prefix are stored, audited', async () => {
      const res = await t.http.post('/v1/api-keys').set(ownerA()).send({ name: 'deploy', scopes: ['vm:read', 'vm:write', 'vm:read'] });
      expect(res.status).toBe(201);
      const token: string = res.body.token;
      expect(token).toMatch(/^cds_live_[A-Za-z0-9]{40}$/);
      expect(res.body).toEqual({
        api_key: {
          id: expect.stringMatching(KEY_ID),
          name: 'deploy',
          scopes: ['vm:read', 'vm:write'],
          token_prefix: token.slice(0, 13),
          created_at: expect.stringMatching(ISO),
          created_by: userId.owner,
          expires_at: null,
          last_used_at: null,
          revoked_at: null,
        },
        token,
      });
      expect((await t.http.get('/v1/wallet').set(bearer(token))).status).toBe(200);
      const [row] = await t.sql<{ token_hash: Buffer; token_prefix: string }>('SELECT token_hash, token_prefix FROM api_keys WHERE id = $1', [res.body.api_key.id]);
      expect(row.token_prefix).toBe(token.slice(0, 13));
      expect(JSON.stringify(await t.sql('SELECT * FROM api_keys'))).not.toContain(token.slice(13));

      // Never again in a response: list, audit log.
      const list = await t.http.get('/v1/api-keys?limit=100').set(ownerA());
      expect(list.text).not.toContain(token.slice(13));
      const audit = await t.http.get('/v1/audit-log?action=api_key.create&limit=1').set(ownerA());
      expect(audit.body.entries).toEqual([
        {
          id: expect.stringMatching(/^aud_/),
          created_at: expect.stringMatching(ISO),
          action: 'api_key.create',
          actor: { type: 'user', id: userId.owner, email: 'owner@a.test' },
          target: { type: 'api_key', id: res.body.api_key.id },
          ip: '127.0.0.1',
          request_id: res.headers['x-request-id'],
          client_request_id: null,
          data: { name: 'deploy', scopes: ['vm:read', 'vm:write'], expires_at: null },
        },
      ]);
      expect(audit.text).not.toContain(token.slice(13));
    });

    it('refuses bad bodies with 400 naming the field, and writes nothing', async () => {
      const before = await t.sql('SELECT count(*)::int AS n FROM api_keys');
      const cases: [object, string, string][] = [
        [{ scopes: ['vm:read'] }, 'name', 'name is required'],
        [{ name: '', scopes: ['vm:read'] }, 'name', 'name must be 1 to 100 characters'],
        [{ name: 'x'.repeat(101), scopes: ['vm:read'] }, 'name', 'name must be 1 to 100 characters'],
        [{ name: 'k' }, 'scopes', 'scopes is required'],
        [{ name: 'k', scopes: [] }, 'scopes', 'scopes must list at least one of vm:read, vm:write, billing:read, billing:write, webhooks:write, audit:read'],
        [{ name: 'k', scopes: ['vm:admin'] }, 'scopes', 'scopes must hold only vm:read, vm:write, billing:read, billing:write, webhooks:write, audit:read'],
        [{ name: 'k', scopes: 'vm:read' }, 'scopes', 'scopes must be an array of scopes'],
        [{ name: 'k', scopes: ['vm:read'], expires_at: 'tomorrow' }, 'expires_at', 'expires_at must be an ISO 8601 timestamp such as 2027-01-01T00:00:00Z'],
        [{ name: 'k', scopes: ['vm:read'], expires_at: '2020-01-01T00:00:00Z' }, 'expires_at', 'expires_at must be in the future'],
      ];
      for (const [body, field, message] of cases) {
        const res = await t.http.post('/v1/api-keys').set(ownerA()).send(body);
        expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: envelope(res, 'invalid_request', message, { field }) });
      }
      expect(await t.sql('SELECT count(*)::int AS n FROM api_keys')).toEqual(before);
    });

    it('lists keys newest first with cursor pagination, revoked ones included, never a token', async () => {
      await t.seed({ regions: [], organizations: [{ ...teamSeed('pg').organizations[0], api_keys: [] }] });
      const owner = { ...bearer(await login('owner@pg.test')), 'X-Org-ID': 'org_pg' };
      const created: string[] = [];
      for (let i = 0; i < 5; i++) created.push((await t.http.post('/v1/api-keys').set(owner).send({ name: `k${i}`, scopes: ['vm:read'] })).body.api_key.id);
      await t.http.delete(`/v1/api-keys/${created[1]}`).set(owner).expect(204);
      const seen: { id: string; revoked_at: string | null }[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const res: Response = await t.http.get(`/v1/api-keys?limit=2${cursor ? `&cursor=${cursor}` : ''}`).set(owner);
        expect(res.status).toBe(200);
        expect(Object.keys(res.body)).toEqual(['api_keys', 'next_cursor']);
        seen.push(...res.body.api_keys);
        cursor = res.body.next_cursor;
        pages++;
      } while (cursor);
      expect(pages).toBe(3);
      expect(seen.map((k) => k.id)).toEqual([...created].reverse());
      expect(seen.find((k) => k.id === created[1])!.revoked_at).toMatch(ISO);
      for (const [q, field] of [['limit=0', 'limit'], ['limit=101', 'limit'], ['cursor=nope', 'cursor']]) {
        const res = await t.http.get(`/v1/api-keys?${q}`).set(owner);
        expect(res.status).toBe(400);
        expect(res.body.error.details).toEqual({ field });
      }
    });

    it('revokes: 204, the key is refused from the next request, 204 again when already revoked (one audit row), 404 for unknown or another organization', async () => {
      const created = await t.http.post('/v1/api-keys').set(ownerA()).send({ name: 'short-lived', scopes: ['vm:read'] });
      const { id } = created.body.api_key;
      expect((await t.http.get('/v1/wallet').set(bearer(created.body.token))).status).toBe(200);
      const del = await t.http.delete(`/v1/api-keys/${id}`).set(ownerA());
      expect(del.status).toBe(204);
      expect(del.text).toBe('');
      const refused = await t.http.get('/v1/wallet').set(bearer(created.body.token));
      expect(refused.body).toEqual(envelope(refused, 'unauthorized', 'Invalid token'));
      expect((await t.http.delete(`/v1/api-keys/${id}`).set(ownerA())).status).toBe(204);
      expect(await t.sql("SELECT count(*)::int AS n FROM audit_log WHERE action = 'api_key.revoke' AND target_id = $1", [id])).toEqual([{ n: 1 }]);

      const [{ id: keyOfB }] = await t.sql<{ id: string }>("SELECT id FROM api_keys WHERE org_id = 'org_b'");
      for (const other of [keyOfB, 'key_doesnotexist000000000']) {
        const res = await t.http.delete(`/v1/api-keys/${other}`).set(ownerA());
        expect(res.body).toEqual(envelope(res, 'not_found', `API key ${other} not found`));
      }
      expect(await t.sql("SELECT revoked_at FROM api_keys WHERE org_id = 'org_b'")).toEqual([{ revoked_at: null }]);
    });

    it('an expired key is 401 with the message of any bad token, and no longer counts against the quota', async () => {
      const expiresAt = new Date(Date.now() + 1500);
      const res = await t.http.post('/v1/api-keys').set(ownerA()).send({ name: 'temp', scopes: ['vm:read'], expires_at: expiresAt.toISOString() });
      expect(res.status).toBe(201);
      expect(res.body.api_key.expires_at).toBe(expiresAt.toISOString());
      expect((await t.http.get('/v1/wallet').set(bearer(res.body.token))).status).toBe(200);
      await new Promise((r) => setTimeout(r, Math.max(0, expiresAt.getTime() - Date.now()) + 100));
      const expired = await t.http.get('/v1/wallet').set(bearer(res.body.token));
      const unknown = await t.http.get('/v1/wallet').set(bearer(apiToken('nobody', 'x')));
      expect(expired.status).toBe(401);
      expect(expired.body).toEqual(envelope(expired, 'unauthorized', 'Invalid token'));
      expect(unknown.body.error.message).toBe(expired.body.error.message);
      expect(expired.headers['x-ratelimit-limit']).toBeUndefined();
    });

    it('writes last_used_at at the first use, then not again within a minute (no write per request)', async () => {
      const res = await t.http.post('/v1/api-keys').set(ownerA()).send({ name: 'used', scopes: ['vm:read'] });
      const { id } = res.body.api_key;
      const version = async () => (await t.sql<{ xmin: string; last_used_at: Date | null }>('SELECT xmin::text AS xmin, last_used_at FROM api_keys WHERE id = $1', [id]))[0];
      expect((await version()).last_used_at).toBeNull();
      const from = Date.now();
      await t.http.get('/v1/wallet').set(bearer(res.body.token)).expect(200);
      const first = await version();
      expect(first.last_used_at!.getTime()).toBeGreaterThanOrEqual(from - 1000);
      for (let i = 0; i < 5; i++) await t.http.get('/v1/wallet').set(bearer(res.body.token)).expect(200);
      // Same row version: no UPDATE happened.
      expect(await version()).toEqual(first);
      const list = await t.http.get('/v1/api-keys?limit=100').set(ownerA());
      expect(list.body.api_keys.find((k: { id: string }) => k.id === id).last_used_at).toBe(first.last_used_at!.toISOString());
    });

    it('the 21st active key is 409 quota_exceeded; a revoked one frees a slot', async () => {
      await t.seed({ regions: [], organizations: [{ ...teamSeed('q').organizations[0], api_keys: [] }] });
      const owner = { ...bearer(await login('owner@q.test')), 'X-Org-ID': 'org_q' };
      const ids: string[] = [];
      for (let i = 0; i < 20; i++) {
        const r = await t.http.post('/v1/api-keys').set(owner).send({ name: `k${i}`, scopes: ['vm:read'] });
        expect(r.status).toBe(201);
        ids.push(r.body.api_key.id);
      }
      const over = await t.http.post('/v1/api-keys').set(owner).send({ name: 'k20', scopes: ['vm:read'] });
      expect(over.body).toEqual(envelope(over, 'quota_exceeded', 'An organization may hold at most 20 active API keys; revoke one first', { limit: 20 }));
      await t.http.delete(`/v1/api-keys/${ids[0]}`).set(owner).expect(204);
      expect((await t.http.post('/v1/api-keys').set(owner).send({ name: 'k20', scopes: ['vm:read'] })).status).toBe(201);
      expect(await t.sql("SELECT count(*)::int AS n FROM api_keys WHERE org_id = 'org_q' AND revoked_at IS NULL")).toEqual([{ n: 20 }]);
    });
  });

  describe('members', () => {
    it('lists members oldest first, then by user id: {members: [{user_id, email, role, joined_at}]}', async () => {
      const res = await t.http.get('/v1/members').set(bearer(session.viewer)).set('X-Org-ID', 'org_a');
      expect(res.status).toBe(200);
      // The four were seeded in one transaction: the same joined_at, so ordered by user id.
      const [{ joined_at }] = await t.sql<{ joined_at: Date }>("SELECT created_at AS joined_at FROM memberships WHERE org_id = 'org_a' AND user_id = $1", [userId.owner]);
      const seeded = [
        { user_id: userId.owner, email: 'owner@a.test', role: 'owner', joined_at: joined_at.toISOString() },
        { user_id: userId.admin, email: 'admin@a.test', role: 'admin', joined_at: joined_at.toISOString() },
        { user_id: userId.developer, email: 'dev@a.test', role: 'developer', joined_at: joined_at.toISOString() },
        { user_id: userId.viewer, email: 'viewer@a.test', role: 'viewer', joined_at: joined_at.toISOString() },
      ].sort((a, b) => (a.user_id < b.user_id ? -1 : 1));
      expect(res.body.members.slice(0, 4)).toEqual(seeded);
      expect(Object.keys(res.body)).toEqual(['members']);
    });

    it('POST /v1/members invites (201 {invitation, token}): nobody is a member before accepting; already a member 409; bad body 400', async () => {
      const u = await spareUser();
      const res = await t.http.post('/v1/members').set(ownerA()).send({ email: u.email.toUpperCase(), role: 'developer' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        invitation: {
          id: expect.stringMatching(/^inv_[A-Za-z0-9]{20,}$/),
          email: u.email,
          role: 'developer',
          created_at: expect.stringMatching(ISO),
          created_by: userId.owner,
          expires_at: new Date(Date.parse(res.body.invitation.created_at) + 7 * 24 * 3600 * 1000).toISOString(),
          accepted_at: null,
          revoked_at: null,
        },
        token: expect.stringMatching(/^cds_inv_[A-Za-z0-9]{32}$/),
      });
      // Not a member until they accept.
      const before = await t.http.get('/v1/wallet').set(bearer(u.token)).set('X-Org-ID', 'org_a');
      expect(before.body).toEqual(envelope(before, 'forbidden', 'X-Org-ID names an organization you are not a member of'));
      expect(await t.sql("SELECT count(*)::int AS n FROM memberships WHERE org_id = 'org_a' AND user_id = $1", [u.id])).toEqual([{ n: 0 }]);
      await t.http.post('/v1/invitations/accept').set(bearer(u.token)).send({ token: res.body.token }).expect(200);
      expect((await t.http.get('/v1/wallet').set(bearer(u.token)).set('X-Org-ID', 'org_a')).status).toBe(200);
      const again = await t.http.post('/v1/members').set(ownerA()).send({ email: u.email, role: 'viewer' });
      expect(again.body).toEqual(envelope(again, 'conflict', 'This email belongs to a member of the organization already'));
      const bad = await t.http.post('/v1/members').set(ownerA()).send({ email: u.email, role: 'superuser' });
      expect(bad.body).toEqual(envelope(bad, 'invalid_request', 'role must be one of owner, admin, developer, viewer', { field: 'role' }));
      const rows = await t.sql('SELECT actor_type, actor_id, action, target_type, data FROM audit_log WHERE action LIKE $1 AND target_id = $2 ORDER BY seq', ['invitation.%', res.body.invitation.id]);
      expect(rows).toEqual([
        { actor_type: 'user', actor_id: userId.owner, action: 'invitation.create', target_type: 'invitation', data: { email: u.email, role: 'developer' } },
        { actor_type: 'user', actor_id: u.id, action: 'invitation.accept', target_type: 'invitation', data: { email: u.email, role: 'developer' } },
      ]);
    });

    it('admins manage developers, viewers and admins; only an owner adds, grants or takes away owner (403 for admins)', async () => {
      const admin = { ...as('admin'), 'X-Org-ID': 'org_a' };
      const u = await spareUser();
      const addOwner = await t.http.post('/v1/members').set(admin).send({ email: u.email, role: 'owner' });
      expect(addOwner.body).toEqual(envelope(addOwner, 'forbidden', 'Only an owner may add an owner, grant the owner role or take it away'));
      await join(u, 'admin', admin);
      const demoted = await t.http.patch(`/v1/members/${u.id}`).set(admin).send({ role: 'viewer' });
      expect(demoted.body).toEqual({ user_id: u.id, email: u.email, role: 'viewer', joined_at: expect.stringMatching(ISO) });
      expect((await t.http.patch(`/v1/members/${u.id}`).set(admin).send({ role: 'owner' })).status).toBe(403);
      expect((await t.http.patch(`/v1/members/${userId.owner}`).set(admin).send({ role: 'admin' })).status).toBe(403);
      expect((await t.http.delete(`/v1/members/${userId.owner}`).set(admin)).status).toBe(403);
      // The owner grants owner; then the second owner may be demoted (not the last one).
      const granted = await t.http.patch(`/v1/members/${u.id}`).set(ownerA()).send({ role: 'owner' });
      expect(granted.body.role).toBe('owner');
      expect((await t.http.delete(`/v1/members/${u.id}`).set(admin)).status).toBe(403);
      expect((await t.http.patch(`/v1/members/${u.id}`).set(ownerA()).send({ role: 'developer' })).body.role).toBe('developer');
      const changes = await t.sql('SELECT data FROM audit_log WHERE action = $1 AND target_id = $2 ORDER BY id', ['member.role_change', u.id]);
      expect(changes).toEqual([
        { data: { email: u.email, from: 'admin', to: 'viewer', api_keys_kept: [], api_keys_revoked: [] } },
        { data: { email: u.email, from: 'viewer', to: 'owner' } },
        { data: { email: u.email, from: 'owner', to: 'developer', api_keys_kept: [], api_keys_revoked: [] } },
      ]);
      expect((await t.http.patch('/v1/members/usr_nobody00000000000000').set(ownerA()).send({ role: 'viewer' })).status).toBe(404);
      const noRole = await t.http.patch(`/v1/members/${u.id}`).set(ownerA()).send({});
      expect(noRole.body).toEqual(envelope(noRole, 'invalid_request', 'role is required', { field: 'role' }));
    });

    it('the last owner can be neither demoted nor removed (409 conflict), not even by themselves', async () => {
      await t.seed({ regions: [], organizations: [{ ...teamSeed('lo').organizations[0], api_keys: [] }] });
      const owner = { ...bearer(await login('owner@lo.test')), 'X-Org-ID': 'org_lo' };
      const [{ id: ownerId }] = await t.sql<{ id: string }>("SELECT id FROM users WHERE email = 'owner@lo.test'");
      const demote = await t.http.patch(`/v1/members/${ownerId}`).set(owner).send({ role: 'admin' });
      expect(demote.body).toEqual(envelope(demote, 'conflict', 'An organization keeps at least one owner: this member is its last owner'));
      const leave = await t.http.delete(`/v1/members/${ownerId}`).set(owner);
      expect(leave.status).toBe(409);
      expect(leave.body.error.code).toBe('conflict');
      expect(await t.sql("SELECT role FROM memberships WHERE org_id = 'org_lo' AND user_id = $1", [ownerId])).toEqual([{ role: 'owner' }]);
      // Setting the same role is no change (200, nothing audited).
      expect((await t.http.patch(`/v1/members/${ownerId}`).set(owner).send({ role: 'owner' })).status).toBe(200);
      expect(await t.sql("SELECT count(*)::int AS n FROM audit_log WHERE org_id = 'org_lo' AND action LIKE 'member.%'")).toEqual([{ n: 0 }]);
    });

    it('anyone may remove themselves; a removed member\'s sessions lose the organization at once', async () => {
      const u = await spareUser();
      await join(u, 'viewer');
      const mine = { ...bearer(u.token), 'X-Org-ID': 'org_a' };
      expect((await t.http.get('/v1/members').set(mine)).status).toBe(200);
      const res = await t.http.delete(`/v1/members/${u.id}`).set(mine);
      expect(res.status).toBe(204);
      const after = await t.http.get('/v1/members').set(mine);
      expect(after.body).toEqual(envelope(after, 'forbidden', 'X-Org-ID names an organization you are not a member of'));
      // Removed by someone else: same at once.
      const v = await spareUser();
      await join(v, 'developer');
      expect((await t.http.get('/v1/wallet').set(bearer(v.token)).set('X-Org-ID', 'org_a')).status).toBe(200);
      await t.http.delete(`/v1/members/${v.id}`).set({ ...as('admin'), 'X-Org-ID': 'org_a' }).expect(204);
      expect((await t.http.get('/v1/wallet').set(bearer(v.token)).set('X-Org-ID', 'org_a')).status).toBe(403);
      expect((await t.http.delete(`/v1/members/${v.id}`).set(ownerA())).status).toBe(404);
      expect(await t.sql("SELECT data FROM audit_log WHERE action = 'member.remove' AND target_id = $1", [u.id])).toEqual([{ data: { email: u.email, role: 'viewer', api_keys_kept: [], api_keys_revoked: [] } }]);
    });

    it("another organization's members are out of reach (404), and X-Org-ID of a non-member is 403", async () => {
      const [{ id: ownerB }] = await t.sql<{ id: string }>("SELECT id FROM users WHERE email = 'owner@b.test'");
      expect((await t.http.patch(`/v1/members/${ownerB}`).set(ownerA()).send({ role: 'viewer' })).status).toBe(404);
      expect((await t.http.delete(`/v1/members/${ownerB}`).set(ownerA())).status).toBe(404);
      expect((await t.http.get('/v1/members').set(as('owner')).set('X-Org-ID', 'org_b')).status).toBe(403);
    });
  });

  it('documents the account and audit routes in the OpenAPI document, with their bodies and errors', async () => {
    const doc = (await t.http.get('/v1/openapi.json')).body;
    const ops: Record<string, string[]> = {
      '/v1/api-keys': ['get', 'head', 'post'],
      '/v1/api-keys/{id}': ['delete'],
      '/v1/members': ['get', 'head', 'post'],
      '/v1/members/{user_id}': ['delete', 'patch'],
      '/v1/audit-log': ['get', 'head'],
    };
    for (const [path, methods] of Object.entries(ops)) {
      expect(Object.keys(doc.paths[path]).sort()).toEqual(methods);
      for (const m of methods) {
        expect(doc.paths[path][m].security).toEqual([{ bearer: [] }]);
        expect(Object.keys(doc.paths[path][m].responses)).toEqual(expect.arrayContaining(['401', '403', '429', '500']));
      }
    }
    expect(doc.paths['/v1/api-keys'].post.responses['201'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ApiKeyCreated' });
    expect(Object.keys(doc.paths['/v1/api-keys'].post.responses)).toEqual(expect.arrayContaining(['400', '409']));
    expect(Object.keys(doc.paths['/v1/members/{user_id}'].patch.responses)).toEqual(expect.arrayContaining(['200', '400', '404', '409']));
    expect(doc.paths['/v1/audit-log'].get.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(['action', 'actor_id', 'target_id', 'since', 'until', 'limit', 'cursor']),
    );
    expect(Object.keys(doc.components.schemas.AuditEntry.properties)).toEqual(['id', 'created_at', 'action', 'actor', 'target', 'ip', 'request_id', 'client_request_id', 'data']);
    expect(Object.keys(doc.components.schemas.ApiKey.properties)).toEqual([
      'id', 'name', 'scopes', 'token_prefix', 'created_at', 'created_by', 'expires_at', 'last_used_at', 'revoked_at',
    ]);
  });
});
