import { scaled } from '../support/deadlines';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TestDatabase, createTestDatabase, usingPostgres } from '../support/database';
import { OWNER_PASSWORD, apiToken, region } from '../support/fixtures';
import { teamOrg } from '../support/accounts';
import { Answer, SHARED_IDEMPOTENCY_SECRET, callProcess } from '../support/process-http';
import { ServerProcess, runCli, startServerProcess, tempDir } from '../support/processes';

/**
 * A black-box contract suite written from lifecycle.md, sections "Accounts" and "Audit log",
 * against two real server processes (node dist/src/main.js) sharing one PostgreSQL database.
 * Only HTTP (and the operator CLI to load the seed): no SQL, no application internals. Each
 * clause alternates the processes, so what one process writes the other must see.
 */
const describeOnPostgres = usingPostgres() ? describe : describe.skip;
if (!usingPostgres()) {
  console.log('accounts-processes.e2e-spec: skipped, needs DATABASE_URL (PostgreSQL); two processes cannot share the embedded engine');
}

const IDEMPOTENCY_SECRET = SHARED_IDEMPOTENCY_SECRET;

describeOnPostgres('lifecycle.md Accounts and Audit log, against two server processes (PostgreSQL)', () => {
  let db: TestDatabase;
  let dir: ReturnType<typeof tempDir>;
  let a: ServerProcess;
  let b: ServerProcess;
  const secrets: string[] = [OWNER_PASSWORD];
  const tok: Record<string, string> = {};
  const uid: Record<string, string> = {};

  const call = (p: ServerProcess, method: string, path: string, opts: { token?: string; org?: string; body?: unknown; idempotencyKey?: string } = {}): Promise<Answer> =>
    callProcess(p, method, path, opts);
  const login = async (p: ServerProcess, email: string): Promise<string> => {
    const r = await call(p, 'POST', '/v1/auth/login', { body: { email, password: OWNER_PASSWORD } });
    expect(r.status).toBe(200);
    secrets.push(r.body.token);
    return r.body.token as string;
  };
  /** accounts.md: nobody joins without accepting. `inviter` invites on one process, the user accepts on the other. */
  const joinOrg = async (inviter: string, user: { token: string }, email: string, role: string, org: string) => {
    const inv = await call(a, 'POST', '/v1/members', { token: inviter, org, body: { email, role } });
    expect(inv.status).toBe(201);
    secrets.push(inv.body.token);
    const accepted = await call(b, 'POST', '/v1/invitations/accept', { token: user.token, body: { token: inv.body.token } });
    expect(accepted.status).toBe(200);
  };
  const signup = async (p: ServerProcess, email: string): Promise<{ id: string; token: string }> => {
    const r = await call(p, 'POST', '/v1/auth/signup', { body: { email, password: OWNER_PASSWORD, organization_name: email } });
    expect(r.status).toBe(201);
    secrets.push(r.body.token);
    return { id: r.body.user.id, token: r.body.token };
  };
  const k = { org: 'org_k' };

  beforeAll(async () => {
    db = await createTestDatabase();
    dir = tempDir('cds-accounts-');
    const seed = join(dir.path, 'seed.json');
    writeFileSync(seed, JSON.stringify({ regions: [region()], organizations: [teamOrg('k'), teamOrg('m')] }));
    // Both processes hold the same server secret: either can open the other's sealed answers.
    const env = { DATABASE_URL: db.url, DEMO_SEED: 'false', IDEMPOTENCY_SECRET: IDEMPOTENCY_SECRET };
    const seeded = runCli(['seed', seed], env);
    expect(seeded.status).toBe(0);
    // Migrated by the seed: the two start side by side.
    [a, b] = await Promise.all([startServerProcess({ ...env, WORKER_ENABLED: 'false' }), startServerProcess({ ...env, WORKER_ENABLED: 'false' })]);
    for (const [role, email] of [['owner', 'owner@k.test'], ['admin', 'admin@k.test'], ['dev', 'dev@k.test'], ['viewer', 'viewer@k.test'], ['ownerM', 'owner@m.test']]) {
      tok[role] = await login(role.length % 2 ? a : b, email);
      const me = await call(a, 'GET', '/v1/members', { token: tok[role], org: role === 'ownerM' ? 'org_m' : 'org_k' });
      uid[role] = me.body.members.find((m: { email: string }) => m.email === email).user_id;
    }
  }, scaled(120_000));
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    // Never a token or a password in a log line, on either process.
    for (const out of [a?.output() ?? '', b?.output() ?? '']) {
      expect(out).toContain('request completed');
      for (const s of secrets) expect(out).not.toContain(s.length > 13 ? s.slice(13) : s);
    }
    await db?.drop();
    dir?.remove();
  });

  describe('Accounts: API keys', () => {
    it('POST /v1/api-keys {name, scopes, expires_at?} (admin, owner) → 201 {api_key, token}; api_key has exactly the listed members; token_prefix is "cds_live_" + 4', async () => {
      const r = await call(a, 'POST', '/v1/api-keys', { token: tok.admin, ...k, body: { name: 'contract', scopes: ['vm:read'] } });
      expect(r.status).toBe(201);
      secrets.push(r.body.token);
      expect(Object.keys(r.body).sort()).toEqual(['api_key', 'token']);
      expect(Object.keys(r.body.api_key).sort()).toEqual(['created_at', 'created_by', 'expires_at', 'id', 'last_used_at', 'name', 'revoked_at', 'scopes', 'token_prefix']);
      expect(r.body.api_key.token_prefix).toBe(r.body.token.slice(0, 13));
      expect(r.body.api_key.token_prefix).toMatch(/^cds_live_[A-Za-z0-9]{4}$/);
      expect(r.body.api_key.created_by).toBe(uid.admin);
      // The token is shown once: the list (on the other process) never holds it.
      const list = await call(b, 'GET', '/v1/api-keys?limit=100', { token: tok.owner, ...k });
      expect(list.status).toBe(200);
      expect(Object.keys(list.body)).toEqual(['api_keys', 'next_cursor']);
      expect(list.body.api_keys.map((x: { id: string }) => x.id)).toContain(r.body.api_key.id);
      expect(list.text).not.toContain(r.body.token.slice(13));
    });

    it('GET /v1/api-keys paginates with a cursor: {api_keys, next_cursor}', async () => {
      const first = await call(a, 'GET', '/v1/api-keys?limit=1', { token: tok.owner, ...k });
      expect(first.body.api_keys).toHaveLength(1);
      expect(typeof first.body.next_cursor).toBe('string');
      const second = await call(b, 'GET', `/v1/api-keys?limit=1&cursor=${first.body.next_cursor}`, { token: tok.owner, ...k });
      expect(second.body.api_keys).toHaveLength(1);
      expect(second.body.api_keys[0].id).not.toBe(first.body.api_keys[0].id);
    });

    it('DELETE /v1/api-keys/{id} → 204, effective within 1 s on every process; again 204; unknown or another organization\'s key 404', async () => {
      const created = await call(a, 'POST', '/v1/api-keys', { token: tok.owner, ...k, body: { name: 'doomed', scopes: ['vm:read'] } });
      secrets.push(created.body.token);
      expect((await call(b, 'GET', '/v1/wallet', { token: created.body.token })).status).toBe(200);
      const del = await call(a, 'DELETE', `/v1/api-keys/${created.body.api_key.id}`, { token: tok.owner, ...k });
      expect(del.status).toBe(204);
      const revokedAt = Date.now();
      let seenAfter = -1;
      while (Date.now() - revokedAt < scaled(1000)) {
        if ((await call(b, 'GET', '/v1/wallet', { token: created.body.token })).status === 401) {
          seenAfter = Date.now() - revokedAt;
          break;
        }
      }
      expect(seenAfter).toBeGreaterThanOrEqual(0);
      expect(seenAfter).toBeLessThan(scaled(1000));
      expect((await call(b, 'DELETE', `/v1/api-keys/${created.body.api_key.id}`, { token: tok.owner, ...k })).status).toBe(204);
      const mKeys = await call(b, 'GET', '/v1/api-keys', { token: tok.ownerM, org: 'org_m' });
      const other = await call(a, 'DELETE', `/v1/api-keys/${mKeys.body.api_keys[0].id}`, { token: tok.owner, ...k });
      expect(other.status).toBe(404);
      expect(other.body.error.code).toBe('not_found');
      expect((await call(a, 'DELETE', '/v1/api-keys/key_neverexisted000000000', { token: tok.owner, ...k })).status).toBe(404);
      expect((await call(b, 'GET', '/v1/wallet', { token: apiToken('m', 'rw') })).status).toBe(200);
    });

    it('20 active keys per organization: the 21st is 409 quota_exceeded', async () => {
      const org = await signup(a, 'quota@contract.test');
      const [{ id: orgId }] = (await call(b, 'POST', '/v1/auth/login', { body: { email: 'quota@contract.test', password: OWNER_PASSWORD } })).body.organizations;
      const results = [];
      for (let i = 0; i < 21; i++) results.push((await call(i % 2 ? a : b, 'POST', '/v1/api-keys', { token: org.token, org: orgId, body: { name: `q${i}`, scopes: ['vm:read'] } })).status);
      expect(results).toEqual([...Array(20).fill(201), 409]);
      const last = await call(a, 'POST', '/v1/api-keys', { token: org.token, org: orgId, body: { name: 'q21', scopes: ['vm:read'] } });
      expect(last.body.error.code).toBe('quota_exceeded');
    });

    it('an expired key is 401', async () => {
      const expires = new Date(Date.now() + 1200).toISOString();
      const r = await call(a, 'POST', '/v1/api-keys', { token: tok.owner, ...k, body: { name: 'brief', scopes: ['vm:read'], expires_at: expires } });
      secrets.push(r.body.token);
      expect(r.body.api_key.expires_at).toBe(expires);
      expect((await call(b, 'GET', '/v1/wallet', { token: r.body.token })).status).toBe(200);
      await new Promise((res) => setTimeout(res, Math.max(0, Date.parse(expires) - Date.now()) + 100));
      const after = await call(b, 'GET', '/v1/wallet', { token: r.body.token });
      expect(after.status).toBe(401);
      expect(after.body.error.code).toBe('unauthorized');
    });

    it('last_used_at is written at most once a minute per key', async () => {
      const r = await call(a, 'POST', '/v1/api-keys', { token: tok.owner, ...k, body: { name: 'used', scopes: ['vm:read'] } });
      secrets.push(r.body.token);
      await call(a, 'GET', '/v1/wallet', { token: r.body.token });
      const read = async () => (await call(b, 'GET', '/v1/api-keys?limit=100', { token: tok.owner, ...k })).body.api_keys.find((x: { id: string }) => x.id === r.body.api_key.id).last_used_at as string;
      const first = await read();
      expect(first).toMatch(/Z$/);
      await new Promise((res) => setTimeout(res, 50));
      await call(b, 'GET', '/v1/wallet', { token: r.body.token });
      expect(await read()).toBe(first);
    });

    it('API keys calling the account endpoints: 403 forbidden', async () => {
      for (const [method, path] of [['GET', '/v1/api-keys'], ['POST', '/v1/api-keys'], ['DELETE', '/v1/api-keys/key_x'], ['GET', '/v1/members'], ['POST', '/v1/members'], ['PATCH', '/v1/members/usr_x'], ['DELETE', '/v1/members/usr_x'], ['GET', '/v1/audit-log']]) {
        const r = await call(a, method, path, { token: apiToken('k', 'rw'), body: method === 'GET' || method === 'DELETE' ? undefined : {} });
        expect({ method, path, status: r.status, code: r.body.error.code }).toEqual({ method, path, status: 403, code: 'forbidden' });
      }
    });
  });

  describe('Every new POST and DELETE accepts Idempotency-Key (decisions.md rules), storing its 2xx, 404 and 409 answers', () => {
    it('POST /v1/api-keys on one process, the retry on the other: the same 201 to the byte, the same token, one key', async () => {
      const idem = 'contract-create-key-7f3a';
      secrets.push(idem, IDEMPOTENCY_SECRET);
      const body = { name: 'retried', scopes: ['vm:read'] };
      const first = await call(a, 'POST', '/v1/api-keys', { token: tok.owner, ...k, body, idempotencyKey: idem });
      expect(first.status).toBe(201);
      secrets.push(first.body.token);
      const again = await call(b, 'POST', '/v1/api-keys', { token: tok.owner, ...k, body, idempotencyKey: idem });
      expect(again.status).toBe(201);
      expect(again.text).toBe(first.text);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      expect((await call(b, 'GET', '/v1/wallet', { token: again.body.token })).status).toBe(200);
      const list = await call(a, 'GET', '/v1/api-keys?limit=100', { token: tok.owner, ...k });
      expect(list.body.api_keys.filter((x: { name: string }) => x.name === 'retried')).toHaveLength(1);
      const other = await call(b, 'POST', '/v1/api-keys', { token: tok.owner, ...k, body: { ...body, name: 'other' }, idempotencyKey: idem });
      expect(other.status).toBe(409);
      expect(other.body.error.code).toBe('idempotency_conflict');
    });

    it('DELETE /v1/api-keys/{id}, POST and DELETE /v1/members: the replay on the other process is the stored answer (204, 201)', async () => {
      const created = await call(a, 'POST', '/v1/api-keys', { token: tok.owner, ...k, body: { name: 'revoked-twice', scopes: ['vm:read'] } });
      secrets.push(created.body.token);
      const path = `/v1/api-keys/${created.body.api_key.id}`;
      const del = await call(a, 'DELETE', path, { token: tok.owner, ...k, idempotencyKey: 'contract-revoke-1' });
      expect(del.status).toBe(204);
      const delAgain = await call(b, 'DELETE', path, { token: tok.owner, ...k, idempotencyKey: 'contract-revoke-1' });
      expect([delAgain.status, delAgain.headers.get('idempotent-replayed')]).toEqual([204, 'true']);

      const u = await signup(b, 'idem-member@contract.test');
      const add = await call(a, 'POST', '/v1/members', { token: tok.owner, ...k, body: { email: 'idem-member@contract.test', role: 'viewer' }, idempotencyKey: 'contract-add-1' });
      expect(add.status).toBe(201);
      const addAgain = await call(b, 'POST', '/v1/members', { token: tok.owner, ...k, body: { email: 'idem-member@contract.test', role: 'viewer' }, idempotencyKey: 'contract-add-1' });
      expect([addAgain.status, addAgain.text, addAgain.headers.get('idempotent-replayed')]).toEqual([201, add.text, 'true']);
      // POST /v1/members invites: the invitee accepts (on the other process), the same answer whether or not the email has an account.
      secrets.push(add.body.token);
      expect((await call(b, 'POST', '/v1/invitations/accept', { token: u.token, body: { token: add.body.token } })).status).toBe(200);
      const unknown = await call(a, 'POST', '/v1/members', { token: tok.owner, ...k, body: { email: 'nobody-yet@contract.test', role: 'viewer' }, idempotencyKey: 'contract-add-2' });
      expect(unknown.status).toBe(201);
      secrets.push(unknown.body.token);
      const unknownAgain = await call(b, 'POST', '/v1/members', { token: tok.owner, ...k, body: { email: 'nobody-yet@contract.test', role: 'viewer' }, idempotencyKey: 'contract-add-2' });
      expect([unknownAgain.status, unknownAgain.text, unknownAgain.headers.get('idempotent-replayed')]).toEqual([201, unknown.text, 'true']);

      const remove = await call(b, 'DELETE', `/v1/members/${u.id}`, { token: tok.owner, ...k, idempotencyKey: 'contract-remove-1' });
      expect(remove.status).toBe(204);
      const removeAgain = await call(a, 'DELETE', `/v1/members/${u.id}`, { token: tok.owner, ...k, idempotencyKey: 'contract-remove-1' });
      expect([removeAgain.status, removeAgain.headers.get('idempotent-replayed')]).toEqual([204, 'true']);
      // Without the key the member is simply gone: 404.
      expect((await call(a, 'DELETE', `/v1/members/${u.id}`, { token: tok.owner, ...k })).status).toBe(404);
    });
  });

  describe('Accounts: members', () => {
    it('GET /v1/members (any role) → {members: [{user_id, email, role, joined_at}]}', async () => {
      for (const role of ['owner', 'admin', 'dev', 'viewer']) {
        const r = await call(role.length % 2 ? a : b, 'GET', '/v1/members', { token: tok[role], ...k });
        expect(r.status).toBe(200);
        expect(Object.keys(r.body)).toEqual(['members']);
        for (const m of r.body.members) expect(Object.keys(m).sort()).toEqual(['email', 'joined_at', 'role', 'user_id']);
      }
    });

    it('POST /v1/members {email, role} (admin, owner) invites (accounts.md) → 201 {invitation, token}, the same for an unknown email; the invitee accepts on the other process; already a member 409', async () => {
      const u = await signup(b, 'joiner@contract.test');
      const r = await call(a, 'POST', '/v1/members', { token: tok.admin, ...k, body: { email: 'joiner@contract.test', role: 'developer' } });
      expect(r.status).toBe(201);
      secrets.push(r.body.token);
      expect(Object.keys(r.body)).toEqual(['invitation', 'token']);
      expect(r.body.invitation).toMatchObject({ email: 'joiner@contract.test', role: 'developer', accepted_at: null });
      const accepted = await call(b, 'POST', '/v1/invitations/accept', { token: u.token, body: { token: r.body.token } });
      expect(accepted.status).toBe(200);
      expect(accepted.body.organization.role).toBe('developer');
      expect((await call(b, 'POST', '/v1/members', { token: tok.owner, ...k, body: { email: 'joiner@contract.test', role: 'viewer' } })).body.error.code).toBe('conflict');
      const nobody = await call(b, 'POST', '/v1/members', { token: tok.owner, ...k, body: { email: 'nobody@contract.test', role: 'viewer' } });
      expect(nobody.status).toBe(201);
      secrets.push(nobody.body.token);
      expect((await call(b, 'POST', '/v1/members', { token: tok.dev, ...k, body: { email: 'joiner@contract.test', role: 'viewer' } })).status).toBe(403);
    });

    it('an admin manages developers, viewers and admins; only an owner adds an owner, grants owner or takes it away (others 403)', async () => {
      const u = await signup(a, 'climber@contract.test');
      expect((await call(a, 'POST', '/v1/members', { token: tok.admin, ...k, body: { email: 'climber@contract.test', role: 'owner' } })).status).toBe(403);
      await joinOrg(tok.admin, u, 'climber@contract.test', 'viewer', k.org);
      const toAdmin = await call(a, 'PATCH', `/v1/members/${u.id}`, { token: tok.admin, ...k, body: { role: 'admin' } });
      expect(toAdmin.status).toBe(200);
      expect(toAdmin.body.role).toBe('admin');
      expect((await call(b, 'PATCH', `/v1/members/${u.id}`, { token: tok.admin, ...k, body: { role: 'owner' } })).status).toBe(403);
      expect((await call(a, 'PATCH', `/v1/members/${u.id}`, { token: tok.owner, ...k, body: { role: 'owner' } })).body.role).toBe('owner');
      expect((await call(b, 'PATCH', `/v1/members/${u.id}`, { token: tok.admin, ...k, body: { role: 'viewer' } })).status).toBe(403);
      expect((await call(a, 'DELETE', `/v1/members/${u.id}`, { token: tok.admin, ...k })).status).toBe(403);
      expect((await call(b, 'DELETE', `/v1/members/${u.id}`, { token: tok.owner, ...k })).status).toBe(204);
    });

    it('demoting or removing the last owner: 409 conflict', async () => {
      const solo = await signup(a, 'solo@contract.test');
      const orgId = (await call(b, 'GET', '/v1/members', { token: solo.token })).body.members[0] && (await call(b, 'POST', '/v1/auth/login', { body: { email: 'solo@contract.test', password: OWNER_PASSWORD } })).body.organizations[0].id;
      const demote = await call(a, 'PATCH', `/v1/members/${solo.id}`, { token: solo.token, org: orgId, body: { role: 'admin' } });
      expect(demote.status).toBe(409);
      expect(demote.body.error.code).toBe('conflict');
      expect((await call(b, 'DELETE', `/v1/members/${solo.id}`, { token: solo.token, org: orgId })).status).toBe(409);
    });

    it('anyone may remove themselves; a removed member\'s sessions lose that organization at once, on every process', async () => {
      const u = await signup(b, 'leaver@contract.test');
      await joinOrg(tok.owner, u, 'leaver@contract.test', 'viewer', k.org);
      expect((await call(b, 'GET', '/v1/wallet', { token: u.token, ...k })).status).toBe(200);
      expect((await call(a, 'DELETE', `/v1/members/${u.id}`, { token: u.token, ...k })).status).toBe(204);
      expect((await call(b, 'GET', '/v1/wallet', { token: u.token, ...k })).status).toBe(403);
      const v = await signup(a, 'removed@contract.test');
      await joinOrg(tok.admin, v, 'removed@contract.test', 'developer', k.org);
      expect((await call(a, 'GET', '/v1/members', { token: v.token, ...k })).status).toBe(200);
      expect((await call(b, 'DELETE', `/v1/members/${v.id}`, { token: tok.admin, ...k })).status).toBe(204);
      expect((await call(a, 'GET', '/v1/members', { token: v.token, ...k })).status).toBe(403);
    });
  });

  describe('Audit log', () => {
    it('GET /v1/audit-log: sessions of admins and owners only → {entries, next_cursor}, newest first, limit 1-100 (default 50)', async () => {
      for (const [role, status] of [['owner', 200], ['admin', 200], ['dev', 403], ['viewer', 403]] as const) {
        expect((await call(a, 'GET', '/v1/audit-log', { token: tok[role], ...k })).status).toBe(status);
      }
      // 32 more entries, so the log holds more than one default page.
      for (let i = 0; i < 16; i++) {
        const c = await call(i % 2 ? a : b, 'POST', '/v1/api-keys', { token: tok.owner, ...k, body: { name: `filler${i}`, scopes: ['vm:read'] } });
        secrets.push(c.body.token);
        expect((await call(i % 2 ? b : a, 'DELETE', `/v1/api-keys/${c.body.api_key.id}`, { token: tok.owner, ...k })).status).toBe(204);
      }
      const r = await call(b, 'GET', '/v1/audit-log', { token: tok.owner, ...k });
      expect(Object.keys(r.body)).toEqual(['entries', 'next_cursor']);
      expect(r.body.entries).toHaveLength(50);
      expect(typeof r.body.next_cursor).toBe('string');
      expect(r.body.entries.slice(0, 2).map((e: { action: string }) => e.action)).toEqual(['api_key.revoke', 'api_key.create']);
      const next = await call(a, 'GET', `/v1/audit-log?cursor=${r.body.next_cursor}&limit=100`, { token: tok.owner, ...k });
      const ids = [...r.body.entries, ...next.body.entries].map((e: { id: string }) => e.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(next.body.next_cursor).toBeNull();
      const times = r.body.entries.map((e: { created_at: string }) => Date.parse(e.created_at));
      expect([...times].sort((x, y) => y - x)).toEqual(times);
      for (const [q, field] of [['limit=0', 'limit'], ['limit=101', 'limit'], ['cursor=x', 'cursor'], ['action=.*', 'action'], ['since=soon', 'since'], ['until=later', 'until']]) {
        const bad = await call(a, 'GET', `/v1/audit-log?${q}`, { token: tok.owner, ...k });
        expect({ q, status: bad.status, code: bad.body.error.code, field: bad.body.error.details.field }).toEqual({ q, status: 400, code: 'invalid_request', field });
      }
    });

    it('entry: {id (aud_), created_at, action, actor {type, id, email|name|null}, target {type, id}|null, ip, request_id, client_request_id, data}', async () => {
      const r = await call(a, 'GET', '/v1/audit-log?action=member.*&limit=100', { token: tok.owner, ...k });
      expect(r.body.entries.length).toBeGreaterThan(0);
      for (const e of r.body.entries) {
        expect(Object.keys(e).sort()).toEqual(['action', 'actor', 'client_request_id', 'created_at', 'data', 'id', 'ip', 'request_id', 'target']);
        expect(e.id).toMatch(/^aud_/);
        expect(e.action).toMatch(/^member\./);
        expect(e.actor.type).toBe('user');
        expect(e.actor.email).toMatch(/@/);
        expect(e.target.type).toBe('user');
        expect(e.ip).toBe('127.0.0.1');
        expect(typeof e.request_id).toBe('string');
        expect(e.client_request_id).toBeNull();
      }
      const seen = new Set(r.body.entries.map((e: { action: string }) => e.action));
      expect(seen).toEqual(new Set(['member.role_change', 'member.remove']));
      const invitations = await call(b, 'GET', '/v1/audit-log?action=invitation.*&limit=100', { token: tok.owner, ...k });
      expect(new Set(invitations.body.entries.map((e: { action: string }) => e.action))).toEqual(new Set(['invitation.create', 'invitation.accept']));
      const keys = await call(b, 'GET', '/v1/audit-log?action=api_key.*&limit=100', { token: tok.owner, ...k });
      expect(new Set(keys.body.entries.map((e: { action: string }) => e.action))).toEqual(new Set(['api_key.create', 'api_key.revoke']));
      const auth = await call(a, 'GET', '/v1/audit-log?action=auth.*&limit=100', { token: tok.owner, ...k });
      expect(auth.body.entries.map((e: { action: string }) => e.action)).toContain('auth.login');
    });

    it('filters: action (exact and prefix), actor_id, target_id, since, until', async () => {
      const since = new Date().toISOString();
      const created = await call(a, 'POST', '/v1/api-keys', { token: tok.admin, ...k, body: { name: 'filtered', scopes: ['vm:read'] } });
      secrets.push(created.body.token);
      const id = created.body.api_key.id;
      const until = new Date(Date.now() + 60_000).toISOString();
      const q = async (query: string) => (await call(b, 'GET', `/v1/audit-log?${query}`, { token: tok.owner, ...k })).body.entries.map((e: { action: string; target: { id: string } | null }) => `${e.action}:${e.target?.id}`);
      expect(await q(`target_id=${id}`)).toEqual([`api_key.create:${id}`]);
      expect(await q(`actor_id=${uid.admin}&since=${since}`)).toEqual([`api_key.create:${id}`]);
      expect(await q(`action=api_key.create&since=${since}&until=${until}`)).toEqual([`api_key.create:${id}`]);
      expect(await q(`action=api_key.*&until=${since}&target_id=${id}`)).toEqual([]);
    });

    it("only the selected organization's entries; a failed login for an unknown email is never shown; never a token or password", async () => {
      await call(a, 'POST', '/v1/auth/login', { body: { email: 'ghost@contract.test', password: 'not a real one' } });
      const all: { actor: { email?: string }; action: string }[] = [];
      let cursor: string | null = null;
      let text = '';
      do {
        const r: Answer = await call(cursor ? b : a, 'GET', `/v1/audit-log?limit=100${cursor ? `&cursor=${cursor}` : ''}`, { token: tok.owner, ...k });
        all.push(...r.body.entries);
        text += r.text;
        cursor = r.body.next_cursor;
      } while (cursor);
      expect(all.map((e) => e.action)).not.toContain('auth.login_failed');
      expect(text).not.toContain('owner@m.test');
      expect(text).not.toContain('not a real one');
      for (const s of secrets) expect(text).not.toContain(s.length > 13 ? s.slice(13) : s);
    });
  });
});
