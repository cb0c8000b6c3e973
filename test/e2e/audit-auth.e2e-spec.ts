import { createHash } from 'node:crypto';
import { CreateApiKey, OPERATOR, RevokeApiKey } from '../../src/modules/auth/application/api-keys.use-cases';
import { OWNER_PASSWORD, bearer, organization, region } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';

interface AuditRow {
  org_id: string | null;
  actor_type: string;
  actor_id: string | null;
  action: string;
  target_id: string | null;
  ip_address: string | null;
  data: Record<string, unknown>;
  created_at: Date;
}

/** Audit log rows for sign-in, sign-in failure, logout, API key creation and revocation: actor, organization, action, IP, time. */
describe('audit log of authentication events', () => {
  let t: TestApp;
  let userId: string;
  let last = 0;

  /** The rows written since the previous call, oldest first. */
  const newRows = async (): Promise<AuditRow[]> => {
    const rows = await t.sql<AuditRow & { id: string }>(
      'SELECT id::text, org_id, actor_type, actor_id, action, target_id, ip_address, data, created_at FROM audit_log WHERE id > $1 ORDER BY id',
      [last],
    );
    if (rows.length > 0) last = Number(rows[rows.length - 1].id);
    return rows.map(({ id: _id, ...row }) => row);
  };
  const sessionId = async (token: string): Promise<string> =>
    (await t.sql<{ id: string }>('SELECT id FROM sessions WHERE token_hash = $1', [createHash('sha256').update(token).digest()]))[0].id;
  const within = (from: number) => ({ asymmetricMatch: (d: Date) => d instanceof Date && d.getTime() >= from - 1000 && d.getTime() <= Date.now() + 1000 });

  beforeAll(async () => {
    t = await startTestApp();
    await t.seed({
      regions: [region()],
      organizations: [organization('x'), organization('y', { members: [{ email: 'owner@x.test', password: OWNER_PASSWORD, role: 'admin' }] })],
    });
    [{ id: userId }] = await t.sql<{ id: string }>("SELECT id FROM users WHERE email = 'owner@x.test'");
    await newRows();
  });
  afterAll(async () => t?.close());

  it('records a sign-in in each of the user\'s organizations, with the IP and the time', async () => {
    const from = Date.now();
    const res = await t.http.post('/v1/auth/login').send({ email: 'owner@x.test', password: OWNER_PASSWORD });
    expect(res.status).toBe(200);
    const session = await sessionId(res.body.token);
    const base = { actor_type: 'user', actor_id: userId, action: 'auth.login', target_id: session, ip_address: '127.0.0.1', data: {}, created_at: within(from) };
    expect(await newRows()).toEqual([
      { ...base, org_id: 'org_x' },
      { ...base, org_id: 'org_y' },
    ]);
  });

  it('records sign-in failures without revealing more to the caller: wrong password (user known) and unknown email', async () => {
    const from = Date.now();
    expect((await t.http.post('/v1/auth/login').send({ email: 'owner@x.test', password: 'wrong password' })).status).toBe(401);
    expect((await t.http.post('/v1/auth/login').send({ email: 'ghost@x.test', password: 'wrong password' })).status).toBe(401);
    // target_id: a keyed hash of the normalized email (the login throttle counts failures by it), never the email.
    const keyedEmail = expect.stringMatching(/^login:[0-9a-f]{64}$/);
    const rows = await newRows();
    expect(rows).toEqual([
      { org_id: null, actor_type: 'user', actor_id: userId, action: 'auth.login_failed', target_id: keyedEmail, ip_address: '127.0.0.1', data: { reason: 'wrong_password' }, created_at: within(from) },
      { org_id: null, actor_type: 'anonymous', actor_id: null, action: 'auth.login_failed', target_id: keyedEmail, ip_address: '127.0.0.1', data: { reason: 'unknown_email' }, created_at: within(from) },
    ]);
    expect(rows[0].target_id).not.toBe(rows[1].target_id);
    const text = JSON.stringify(await t.sql('SELECT data, target_id FROM audit_log'));
    expect(text).not.toContain('wrong password');
    expect(text).not.toContain('ghost@x.test');
  });

  it('records a logout in the organization the session acted on', async () => {
    const login = await t.http.post('/v1/auth/login').send({ email: 'owner@x.test', password: OWNER_PASSWORD });
    const session = await sessionId(login.body.token);
    await newRows();
    const from = Date.now();
    const res = await t.http.post('/v1/auth/logout').set(bearer(login.body.token)).set('X-Org-ID', 'org_y');
    expect(res.status).toBe(204);
    expect(await newRows()).toEqual([
      { org_id: 'org_y', actor_type: 'user', actor_id: userId, action: 'auth.logout', target_id: session, ip_address: '127.0.0.1', data: {}, created_at: within(from) },
    ]);
  });

  it('records API key creation and revocation with the actor (a user with an IP, or the operator CLI as actor system)', async () => {
    const from = Date.now();
    const user = { type: 'user' as const, id: userId, ip: '203.0.113.7' };
    const { key } = await t.app.get(CreateApiKey).execute({ orgId: 'org_x', name: 'deploy', scopes: ['vm:read', 'vm:write'] }, user);
    await t.app.get(RevokeApiKey).execute({ id: key.id, orgId: 'org_x' }, user);
    const { key: cliKey } = await t.app.get(CreateApiKey).execute({ orgId: 'org_y', name: 'cli', scopes: ['vm:read'] }, OPERATOR);
    await t.app.get(RevokeApiKey).execute({ id: cliKey.id }, OPERATOR);
    expect(await newRows()).toEqual([
      { org_id: 'org_x', actor_type: 'user', actor_id: userId, action: 'api_key.create', target_id: key.id, ip_address: '203.0.113.7', data: { name: 'deploy', scopes: ['vm:read', 'vm:write'], expires_at: null }, created_at: within(from) },
      { org_id: 'org_x', actor_type: 'user', actor_id: userId, action: 'api_key.revoke', target_id: key.id, ip_address: '203.0.113.7', data: { name: 'deploy' }, created_at: within(from) },
      { org_id: 'org_y', actor_type: 'system', actor_id: null, action: 'api_key.create', target_id: cliKey.id, ip_address: null, data: { name: 'cli', scopes: ['vm:read'], expires_at: null }, created_at: within(from) },
      { org_id: 'org_y', actor_type: 'system', actor_id: null, action: 'api_key.revoke', target_id: cliKey.id, ip_address: null, data: { name: 'cli' }, created_at: within(from) },
    ]);
    expect(await t.sql('SELECT created_by FROM api_keys WHERE id = $1', [key.id])).toEqual([{ created_by: userId }]);
  });

  it('records a signup in the new organization', async () => {
    const from = Date.now();
    const res = await t.http.post('/v1/auth/signup').send({ email: 'fresh@x.test', password: 'a long password', organization_name: 'Fresh' });
    expect(res.status).toBe(201);
    const session = await sessionId(res.body.token);
    expect(await newRows()).toEqual([
      { org_id: res.body.organization.id, actor_type: 'user', actor_id: res.body.user.id, action: 'auth.signup', target_id: session, ip_address: '127.0.0.1', data: {}, created_at: within(from) },
    ]);
  });
});
