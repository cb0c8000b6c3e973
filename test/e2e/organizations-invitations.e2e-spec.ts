import type { Response } from 'supertest';
import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { INVITATION_NOT_FOUND } from '../../src/modules/auth/application/invitations.use-cases';
import { FixedClock, SystemClock } from '../../src/shared/kernel/clock/clock';
import { VerifyInvariants } from '../../src/modules/verification/application/verify-invariants.use-case';
import { TypeOrmInvariantChecks } from '../../src/modules/verification/infrastructure/typeorm-invariant-checks';
import { BlockStorage } from '../../src/modules/storage-provider/application/block-storage.port';
import { ComputeProvider } from '../../src/modules/servers/application/compute-provider.port';
import { Db } from '../../src/shared/database/transaction';
import { UnitOfWork } from '../../src/shared/database/unit-of-work';
import { OWNER_PASSWORD, apiToken, bearer } from '../support/fixtures';
import { ISO, envelope, teamOrg } from '../support/accounts';
import { region } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';

type Role = 'owner' | 'admin' | 'developer' | 'viewer';

const INV_ID = /^inv_[A-Za-z0-9]{20,}$/;
const ORG_ID = /^org_[A-Za-z0-9]{20,}$/;
const INV_TOKEN = /^cds_inv_[A-Za-z0-9]{32}$/;
const DAY = 24 * 60 * 60 * 1000;
const SESSIONS_ONLY = 'This endpoint is for sessions only; API keys cannot use it';

/**
 * accounts.md on both engines: write scopes that include their read scope, /v1/organizations,
 * invitations (nobody joins without accepting), API keys that outlive people only on purpose, the
 * audit log for API keys with audit:read, and no token of any kind stored in clear. The service
 * runs on a FixedClock (started at the real time) so that an invitation's 7 days can pass.
 * Concurrency (one member from 10 accepts, the organization limit under 15 creates) is in
 * organizations-concurrency (PostgreSQL).
 */
describe('accounts: scopes, organizations, invitations, keys that outlive people, the audit log for tools', () => {
  let t: TestApp;
  const clock = new FixedClock(new Date());
  const writeOnly = bearer(apiToken('oi', 'wo'));
  const auditKey = bearer(apiToken('oi', 'audit'));
  const readOnly = bearer(apiToken('oi', 'ro'));
  const billingRead = bearer(apiToken('oi', 'br'));
  const session: Record<Role, string> = { owner: '', admin: '', developer: '', viewer: '' };
  const userId: Record<Role, string> = { owner: '', admin: '', developer: '', viewer: '' };
  /** Every token this file sees, for the final grep: API keys, sessions, invitations. */
  const tokens: string[] = [];
  let spares = 0;

  const login = async (email: string): Promise<string> => {
    const res = await t.http.post('/v1/auth/login').send({ email, password: OWNER_PASSWORD });
    expect(res.status).toBe(200);
    tokens.push(res.body.token);
    return res.body.token as string;
  };
  /** A user who signed up (so has an organization of their own), not in org_oi. */
  const spareUser = async (): Promise<{ id: string; email: string; token: string; orgId: string }> => {
    const email = `oi-spare${++spares}@elsewhere.test`;
    const res = await t.http.post('/v1/auth/signup').send({ email, password: OWNER_PASSWORD, organization_name: `Spare ${spares}` });
    expect(res.status).toBe(201);
    tokens.push(res.body.token);
    return { id: res.body.user.id, email, token: res.body.token, orgId: res.body.organization.id };
  };
  const as = (role: Role) => ({ ...bearer(session[role]), 'X-Org-ID': 'org_oi' });
  const invite = async (email: string, role: Role, by: Record<string, string> = as('owner')): Promise<Response> => {
    // The service's time stands still unless moved: each invitation a moment later, so "newest first" is well defined.
    clock.advance(10);
    const res = await t.http.post('/v1/invitations').set(by).send({ email, role });
    if (res.status === 201) tokens.push(res.body.token);
    return res;
  };
  const accept = (userToken: string, token: string) => t.http.post('/v1/invitations/accept').set(bearer(userToken)).send({ token });
  const auditRows = (sql: string, params: unknown[]) => t.sql(`SELECT actor_type, actor_id, action, target_type, target_id, data FROM audit_log WHERE ${sql} ORDER BY org_id, seq`, params);

  beforeAll(async () => {
    t = await startTestApp({}, clock);
    const base = teamOrg('oi');
    await t.seed({
      regions: [region()],
      organizations: [
        {
          ...base,
          api_keys: [
            ...base.api_keys,
            { name: 'ci-write', scopes: ['vm:write'], token: apiToken('oi', 'wo') },
            { name: 'siem', scopes: ['audit:read'], token: apiToken('oi', 'audit') },
            { name: 'reader', scopes: ['vm:read'], token: apiToken('oi', 'ro') },
            { name: 'billing', scopes: ['billing:read'], token: apiToken('oi', 'br') },
          ],
        },
      ],
    });
    tokens.push(apiToken('oi', 'wo'), apiToken('oi', 'audit'), apiToken('oi', 'ro'), apiToken('oi', 'br'));
    for (const [role, email] of [['owner', 'owner@oi.test'], ['admin', 'admin@oi.test'], ['developer', 'dev@oi.test'], ['viewer', 'viewer@oi.test']] as const) {
      session[role] = await login(email);
      userId[role] = (await t.sql<{ id: string }>('SELECT id FROM users WHERE email = $1', [email]))[0].id;
    }
  });
  afterAll(async () => t?.close());

  describe('scopes: a write scope includes its read scope', () => {
    it('a vm:write-only key buys a disk, polls its operation to the end and reads the volume and the list', async () => {
      const buy = await t.http.post('/v1/volumes').set(writeOnly).send({ name: 'ci-disk', region: 'id-jkt', size_gb: 100, term_months: 1, currency: 'USD' });
      expect(buy.status).toBe(202);
      const { volume, operation } = buy.body;
      const polled = await t.http.get(`/v1/operations/${operation.id}`).set(writeOnly);
      expect(polled.status).toBe(200);
      expect(polled.body).toEqual(operation);
      await t.app.get(AdvanceOperations).runUntilIdle();
      const done = await t.http.get(`/v1/operations/${operation.id}`).set(writeOnly);
      expect(done.body).toEqual({ ...operation, status: 'succeeded', steps: operation.steps.map((s: object) => ({ ...s, status: 'succeeded' })), result: expect.any(Object), finished_at: expect.stringMatching(ISO) });
      const one = await t.http.get(`/v1/volumes/${volume.id}`).set(writeOnly);
      expect(one.status).toBe(200);
      expect(one.body).toMatchObject({ id: volume.id, name: 'ci-disk', status: 'available' });
      const list = await t.http.get('/v1/volumes').set(writeOnly);
      expect(list.status).toBe(200);
      expect(list.body.volumes.map((v: { id: string }) => v.id)).toContain(volume.id);
      expect((await t.http.get('/v1/wallet').set(writeOnly)).status).toBe(200);
      // The key's scopes are what was granted, not what it implies.
      const keys = await t.http.get('/v1/api-keys?limit=100').set(as('owner'));
      expect(keys.body.api_keys.find((k: { name: string }) => k.name === 'ci-write').scopes).toEqual(['vm:write']);
    });

    it('nothing else implies anything: the 403 names the missing scope', async () => {
      const buy = await t.http.post('/v1/volumes').set(readOnly).send({ name: 'nope', region: 'id-jkt', size_gb: 100, term_months: 1, currency: 'USD' });
      expect(buy.body).toEqual(envelope(buy, 'forbidden', 'The API key lacks the scope vm:write'));
      const read = await t.http.get('/v1/volumes').set(billingRead);
      expect(read.body).toEqual(envelope(read, 'forbidden', 'The API key lacks the scope vm:read'));
      const audit = await t.http.get('/v1/audit-log').set(writeOnly);
      expect(audit.body).toEqual(envelope(audit, 'forbidden', 'The API key lacks the scope audit:read'));
    });
  });

  describe('/v1/organizations', () => {
    it('creates an organization: 201 with the caller as owner, empty USD and IDR wallets, audited; listed after the older ones; the first stays the default', async () => {
      const u = await spareUser();
      const res = await t.http.post('/v1/organizations').set(bearer(u.token)).send({ name: 'Platform team' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ organization: { id: expect.stringMatching(ORG_ID), name: 'Platform team', role: 'owner', created_at: expect.stringMatching(ISO) } });
      const orgId: string = res.body.organization.id;
      const wallet = await t.http.get('/v1/wallet').set(bearer(u.token)).set('X-Org-ID', orgId);
      expect(wallet.body).toEqual({
        balances: [
          { currency: 'USD', available: '0.00000', reserved: '0.00000' },
          { currency: 'IDR', available: '0', reserved: '0' },
        ],
      });
      expect(await t.sql('SELECT currency, available::text FROM wallet_balances WHERE org_id = $1 ORDER BY currency', [orgId])).toEqual([
        { currency: 'IDR', available: '0' },
        { currency: 'USD', available: '0' },
      ]);
      const members = await t.http.get('/v1/members').set(bearer(u.token)).set('X-Org-ID', orgId);
      expect(members.body.members.map((m: { user_id: string; role: string }) => [m.user_id, m.role])).toEqual([[u.id, 'owner']]);
      const list = await t.http.get('/v1/organizations').set(bearer(u.token));
      expect(list.status).toBe(200);
      const [personal] = await t.sql<{ created_at: Date }>('SELECT created_at FROM organizations WHERE id = $1', [u.orgId]);
      expect(list.body).toEqual({
        organizations: [
          { id: u.orgId, name: `Spare ${spares}`, role: 'owner', created_at: personal.created_at.toISOString() },
          res.body.organization,
        ],
      });
      // Without X-Org-ID the first (oldest membership) is used.
      const who = await t.http.get('/v1/members').set(bearer(u.token));
      expect(who.body.members[0].user_id).toBe(u.id);
      expect(await auditRows('org_id = $1', [orgId])).toEqual([
        { actor_type: 'user', actor_id: u.id, action: 'organization.create', target_type: 'organization', target_id: orgId, data: { name: 'Platform team' } },
      ]);
    });

    it('refuses bad names with 400 naming name, and API keys with 403; writes nothing', async () => {
      const u = await spareUser();
      const before = await t.sql('SELECT count(*)::int AS n FROM organizations');
      const cases: [object, string][] = [
        [{}, 'name is required'],
        [{ name: 42 }, 'name must be a string'],
        [{ name: '' }, 'name must not be blank'],
        [{ name: '   ' }, 'name must not be blank'],
        [{ name: 'x'.repeat(101) }, 'name must be 1 to 100 characters'],
        [{ name: 'tab\there' }, 'name must not hold control characters'],
      ];
      for (const [body, message] of cases) {
        const res = await t.http.post('/v1/organizations').set(bearer(u.token)).send(body);
        expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: envelope(res, 'invalid_request', message, { field: 'name' }) });
      }
      expect((await t.http.post('/v1/organizations').set(bearer(u.token)).send({ name: 'é'.repeat(100) })).status).toBe(201);
      for (const call of [
        () => t.http.get('/v1/organizations').set(writeOnly),
        () => t.http.post('/v1/organizations').set(writeOnly).send({ name: 'By key' }),
        () => t.http.patch('/v1/organizations/org_oi').set(writeOnly).send({ name: 'By key' }),
        () => t.http.post('/v1/invitations/accept').set(writeOnly).send({ token: 'cds_inv_' + 'a'.repeat(32) }),
      ]) {
        const res = await call();
        expect(res.body).toEqual(envelope(res, 'forbidden', SESSIONS_ONLY));
      }
      expect(await t.sql('SELECT count(*)::int AS n FROM organizations')).toEqual([{ n: (before[0] as { n: number }).n + 1 }]);
    });

    it('renames: the owner 200 (audited with the old and new name); another member 403; a non-member 404; the same name writes nothing', async () => {
      const res = await t.http.patch('/v1/organizations/org_oi').set(bearer(session.owner)).send({ name: 'Org OI renamed' });
      expect(res.status).toBe(200);
      const [{ created_at }] = await t.sql<{ created_at: Date }>("SELECT created_at FROM organizations WHERE id = 'org_oi'");
      expect(res.body).toEqual({ organization: { id: 'org_oi', name: 'Org OI renamed', role: 'owner', created_at: created_at.toISOString() } });
      for (const role of ['admin', 'developer', 'viewer'] as const) {
        const refused = await t.http.patch('/v1/organizations/org_oi').set(bearer(session[role])).send({ name: 'Mine now' });
        expect(refused.body).toEqual(envelope(refused, 'forbidden', `Role ${role} may not rename the organization; it needs: owner`));
      }
      const u = await spareUser();
      const stranger = await t.http.patch('/v1/organizations/org_oi').set(bearer(u.token)).send({ name: 'Mine now' });
      expect(stranger.body).toEqual(envelope(stranger, 'not_found', 'Organization org_oi not found'));
      expect((await t.http.patch('/v1/organizations/org_oi').set(bearer(session.owner)).send({ name: 'Org OI renamed' })).status).toBe(200);
      expect(await t.sql("SELECT name FROM organizations WHERE id = 'org_oi'")).toEqual([{ name: 'Org OI renamed' }]);
      expect(await auditRows("org_id = 'org_oi' AND action = 'organization.update'", [])).toEqual([
        { actor_type: 'user', actor_id: userId.owner, action: 'organization.update', target_type: 'organization', target_id: 'org_oi', data: { name: { from: 'Org oi', to: 'Org OI renamed' } } },
      ]);
    });

    it('a user belongs to at most 10 organizations: the 11th create is 409 quota_exceeded with details.limit, nothing written', async () => {
      const u = await spareUser();
      for (let i = 2; i <= 10; i++) expect((await t.http.post('/v1/organizations').set(bearer(u.token)).send({ name: `Org ${i}` })).status).toBe(201);
      const over = await t.http.post('/v1/organizations').set(bearer(u.token)).send({ name: 'Org 11' });
      expect(over.body).toEqual(envelope(over, 'quota_exceeded', 'A user may belong to at most 10 organizations; leave one first', { limit: 10 }));
      expect(await t.sql('SELECT count(*)::int AS n FROM memberships WHERE user_id = $1', [u.id])).toEqual([{ n: 10 }]);
      expect(await t.sql("SELECT count(*)::int AS n FROM organizations WHERE name = 'Org 11'")).toEqual([{ n: 0 }]);
      // Accepting an invitation counts too.
      const inv = await invite(u.email, 'viewer');
      const full = await accept(u.token, inv.body.token);
      expect(full.body).toEqual(envelope(full, 'quota_exceeded', 'A user may belong to at most 10 organizations; leave one first', { limit: 10 }));
      // An Idempotency-Key replays the 201 (kept under the user: no organization is selected).
      const v = await spareUser();
      const first = await t.http.post('/v1/organizations').set(bearer(v.token)).set('Idempotency-Key', 'org-create-1').send({ name: 'Once' });
      const again = await t.http.post('/v1/organizations').set(bearer(v.token)).set('Idempotency-Key', 'org-create-1').send({ name: 'Once' });
      expect(again.text).toBe(first.text);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(await t.sql("SELECT count(*)::int AS n FROM organizations WHERE name = 'Once'")).toEqual([{ n: 1 }]);
    });
  });

  describe('invitations: nobody joins without accepting', () => {
    it('creates (201 {invitation, token}, token stored as a digest), lists by status, and the invitee accepts with the role: 200 {organization}', async () => {
      const u = await spareUser();
      const created = await invite(u.email.toUpperCase(), 'developer', as('admin'));
      expect(created.status).toBe(201);
      const createdAt = Date.parse(created.body.invitation.created_at);
      expect(created.body).toEqual({
        invitation: {
          id: expect.stringMatching(INV_ID),
          email: u.email,
          role: 'developer',
          created_at: clock.now().toISOString(),
          created_by: userId.admin,
          expires_at: new Date(createdAt + 7 * DAY).toISOString(),
          accepted_at: null,
          revoked_at: null,
        },
        token: expect.stringMatching(INV_TOKEN),
      });
      const { id } = created.body.invitation;
      const stored = JSON.stringify(await t.sql('SELECT * FROM invitations WHERE id = $1', [id]));
      expect(stored).not.toContain(created.body.token.slice(8));
      const pending = await t.http.get('/v1/invitations?status=pending').set(as('owner'));
      expect(pending.status).toBe(200);
      expect(pending.body.invitations[0]).toEqual(created.body.invitation);
      expect(pending.text).not.toContain(created.body.token.slice(8));

      const res = await accept(u.token, created.body.token);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ organization: { id: 'org_oi', name: expect.any(String), role: 'developer' } });
      expect(await t.sql("SELECT role FROM memberships WHERE org_id = 'org_oi' AND user_id = $1", [u.id])).toEqual([{ role: 'developer' }]);
      const accepted = await t.http.get('/v1/invitations?status=accepted').set(as('owner'));
      expect(accepted.body.invitations[0]).toEqual({ ...created.body.invitation, accepted_at: clock.now().toISOString() });
      expect((await t.http.get('/v1/invitations?status=pending').set(as('owner'))).body.invitations.map((i: { id: string }) => i.id)).not.toContain(id);
      // Used: 404 with the one message; already a member: 409.
      const again = await accept(u.token, created.body.token);
      expect(again.body).toEqual(envelope(again, 'not_found', INVITATION_NOT_FOUND));
      const second = await invite(`other-${u.email}`, 'viewer');
      expect((await invite(u.email, 'viewer')).status).toBe(409);
      expect(second.status).toBe(201);
      expect(await auditRows("org_id = 'org_oi' AND target_id = $1", [id])).toEqual([
        { actor_type: 'user', actor_id: userId.admin, action: 'invitation.create', target_type: 'invitation', target_id: id, data: { email: u.email, role: 'developer' } },
        { actor_type: 'user', actor_id: u.id, action: 'invitation.accept', target_type: 'invitation', target_id: id, data: { email: u.email, role: 'developer' } },
      ]);
    });

    it('accepting: another email 403; unknown or malformed token 404 (one message); already a member 409 (token checked first, then email, then membership)', async () => {
      const u = await spareUser();
      const other = await spareUser();
      const inv = await invite(u.email, 'viewer');
      const wrong = await accept(other.token, inv.body.token);
      expect(wrong.body).toEqual(envelope(wrong, 'forbidden', 'This invitation was made for another email address'));
      for (const token of ['cds_inv_' + 'Z'.repeat(32), 'cds_live_nope', 'x']) {
        const res = await accept(u.token, token);
        expect(res.body).toEqual(envelope(res, 'not_found', INVITATION_NOT_FOUND));
      }
      const missing = await t.http.post('/v1/invitations/accept').set(bearer(u.token)).send({});
      expect(missing.body).toEqual(envelope(missing, 'invalid_request', 'token is required', { field: 'token' }));
      // The owner of org_oi invited as a member of org_oi: 409 at accept (when the email matches).
      const ownerOwn = await invite('dup@oi.test', 'viewer');
      expect(ownerOwn.status).toBe(201);
      expect(await t.sql("SELECT count(*)::int AS n FROM memberships WHERE org_id = 'org_oi' AND user_id = $1", [u.id])).toEqual([{ n: 0 }]);
      // An invitation created before the user joined another way: 409 at accept.
      const first = await invite(other.email, 'viewer');
      const secondInv = await invite(other.email, 'developer');
      await accept(other.token, first.body.token).expect(200);
      const member = await accept(other.token, secondInv.body.token);
      expect(member.body).toEqual(envelope(member, 'conflict', 'You are a member of this organization already'));
    });

    it('role rules: an admin cannot invite (or revoke an invitation to) an owner; developers and viewers cannot invite or list; bad bodies 400; a member already 409', async () => {
      const asOwner = await invite('future-owner@elsewhere.test', 'owner');
      expect(asOwner.status).toBe(201);
      const byAdmin = await invite('future-owner2@elsewhere.test', 'owner', as('admin'));
      expect(byAdmin.body).toEqual(envelope(byAdmin, 'forbidden', 'Only an owner may add an owner, grant the owner role or take it away'));
      const revokeByAdmin = await t.http.delete(`/v1/invitations/${asOwner.body.invitation.id}`).set(as('admin'));
      expect(revokeByAdmin.status).toBe(403);
      for (const role of ['developer', 'viewer'] as const) {
        const res = await invite('x@elsewhere.test', 'viewer', as(role));
        expect(res.body).toEqual(envelope(res, 'forbidden', `Role ${role} may not do this; it needs one of: admin, owner`));
        expect((await t.http.get('/v1/invitations').set(as(role))).status).toBe(403);
      }
      const key = await t.http.post('/v1/invitations').set(writeOnly).send({ email: 'x@elsewhere.test', role: 'viewer' });
      expect(key.body).toEqual(envelope(key, 'forbidden', SESSIONS_ONLY));
      const cases: [object, string, string][] = [
        [{ role: 'viewer' }, 'email', 'email is required'],
        [{ email: 'not-an-email', role: 'viewer' }, 'email', 'email must be an email address'],
        [{ email: 'x@elsewhere.test' }, 'role', 'role is required'],
        [{ email: 'x@elsewhere.test', role: 'root' }, 'role', 'role must be one of owner, admin, developer, viewer'],
      ];
      for (const [body, field, message] of cases) {
        const res = await t.http.post('/v1/invitations').set(as('owner')).send(body);
        expect(res.body).toEqual(envelope(res, 'invalid_request', message, { field }));
      }
      const already = await invite('ADMIN@oi.test', 'viewer');
      expect(already.body).toEqual(envelope(already, 'conflict', 'This email belongs to a member of the organization already'));
      const bad = await t.http.get('/v1/invitations?status=lost').set(as('owner'));
      expect(bad.body).toEqual(envelope(bad, 'invalid_request', 'status must be one of pending, accepted, expired, revoked', { field: 'status' }));
    });

    it('revokes: 204, again 204 (one audit entry); the token then answers 404; an accepted one is 409 invalid_state; unknown 404', async () => {
      const u = await spareUser();
      const inv = await invite(u.email, 'viewer');
      const { id } = inv.body.invitation;
      expect((await t.http.delete(`/v1/invitations/${id}`).set(as('admin'))).status).toBe(204);
      expect((await t.http.delete(`/v1/invitations/${id}`).set(as('admin'))).status).toBe(204);
      const revoked = await accept(u.token, inv.body.token);
      expect(revoked.body).toEqual(envelope(revoked, 'not_found', INVITATION_NOT_FOUND));
      const listed = await t.http.get('/v1/invitations?status=revoked').set(as('owner'));
      expect(listed.body.invitations.find((i: { id: string }) => i.id === id)).toEqual({ ...inv.body.invitation, revoked_at: expect.stringMatching(ISO) });
      expect(await t.sql("SELECT count(*)::int AS n FROM audit_log WHERE action = 'invitation.revoke' AND target_id = $1", [id])).toEqual([{ n: 1 }]);
      const taken = await invite(u.email, 'viewer');
      await accept(u.token, taken.body.token).expect(200);
      const late = await t.http.delete(`/v1/invitations/${taken.body.invitation.id}`).set(as('owner'));
      expect(late.body).toEqual(envelope(late, 'invalid_state', 'This invitation was accepted already; remove the member instead'));
      const unknown = await t.http.delete('/v1/invitations/inv_doesnotexist0000000000').set(as('owner'));
      expect(unknown.body).toEqual(envelope(unknown, 'not_found', 'Invitation inv_doesnotexist0000000000 not found'));
    });

    it('signup with invitation_token joins the inviting organization with the role and creates no organization; an invalid token is 400 and creates no user', async () => {
      const orgsBefore = (await t.sql<{ n: number }>('SELECT count(*)::int AS n FROM organizations'))[0].n;
      const inv = await invite('newcomer@elsewhere.test', 'admin');
      const bad = await t.http.post('/v1/auth/signup').send({ email: 'someone-else@elsewhere.test', password: OWNER_PASSWORD, invitation_token: inv.body.token });
      expect(bad.body).toEqual(envelope(bad, 'invalid_request', 'invitation_token is not a pending invitation for this email', { field: 'invitation_token' }));
      const unknown = await t.http.post('/v1/auth/signup').send({ email: 'newcomer@elsewhere.test', password: OWNER_PASSWORD, invitation_token: 'cds_inv_' + 'q'.repeat(32) });
      expect(unknown.body).toEqual(envelope(unknown, 'invalid_request', 'invitation_token is not a pending invitation for this email', { field: 'invitation_token' }));
      expect(await t.sql("SELECT count(*)::int AS n FROM users WHERE email IN ('someone-else@elsewhere.test', 'newcomer@elsewhere.test')")).toEqual([{ n: 0 }]);
      const noName = await t.http.post('/v1/auth/signup').send({ email: 'plain@elsewhere.test', password: OWNER_PASSWORD });
      expect(noName.body).toEqual(envelope(noName, 'invalid_request', 'organization_name is required', { field: 'organization_name' }));

      const res = await t.http.post('/v1/auth/signup').send({ email: 'Newcomer@elsewhere.test', password: OWNER_PASSWORD, invitation_token: inv.body.token, organization_name: 'Ignored' });
      expect(res.status).toBe(201);
      tokens.push(res.body.token);
      const [{ created_at }] = await t.sql<{ created_at: Date }>("SELECT created_at FROM organizations WHERE id = 'org_oi'");
      expect(res.body).toEqual({
        token: expect.stringMatching(/^cds_sess_/),
        expires_at: new Date(clock.now().getTime() + DAY).toISOString(),
        user: { id: expect.stringMatching(/^usr_/), email: 'newcomer@elsewhere.test', created_at: expect.stringMatching(ISO) },
        organization: { id: 'org_oi', name: expect.any(String), role: 'admin', created_at: created_at.toISOString() },
      });
      expect((await t.sql<{ n: number }>('SELECT count(*)::int AS n FROM organizations'))[0].n).toBe(orgsBefore);
      const orgs = await t.http.get('/v1/organizations').set(bearer(res.body.token));
      expect(orgs.body.organizations.map((o: { id: string; role: string }) => [o.id, o.role])).toEqual([['org_oi', 'admin']]);
      // No X-Org-ID needed: the invited organization is the default.
      expect((await t.http.get('/v1/members').set(bearer(res.body.token))).status).toBe(200);
      const reused = await t.http.post('/v1/auth/signup').send({ email: 'newcomer2@elsewhere.test', password: OWNER_PASSWORD, invitation_token: inv.body.token });
      expect(reused.status).toBe(400);
      expect(await auditRows("org_id = 'org_oi' AND actor_id = $1", [res.body.user.id])).toEqual([
        { actor_type: 'user', actor_id: res.body.user.id, action: 'auth.signup', target_type: 'session', target_id: expect.stringMatching(/^ses_/), data: {} },
        { actor_type: 'user', actor_id: res.body.user.id, action: 'invitation.accept', target_type: 'invitation', target_id: inv.body.invitation.id, data: { email: 'newcomer@elsewhere.test', role: 'admin' } },
      ]);
    });

    it('at most 50 pending invitations per organization (409 quota_exceeded); a revoked one frees a slot', async () => {
      const u = await spareUser();
      const own = { ...bearer(u.token), 'X-Org-ID': u.orgId };
      for (let i = 0; i < 50; i++) expect((await invite(`p${i}@pending.test`, 'viewer', own)).status).toBe(201);
      const over = await invite('p50@pending.test', 'viewer', own);
      expect(over.body).toEqual(envelope(over, 'quota_exceeded', 'An organization may hold at most 50 pending invitations; revoke one first', { limit: 50 }));
      const [{ id }] = await t.sql<{ id: string }>("SELECT id FROM invitations WHERE org_id = $1 AND email = 'p0@pending.test'", [u.orgId]);
      await t.http.delete(`/v1/invitations/${id}`).set(own).expect(204);
      expect((await invite('p50@pending.test', 'viewer', own)).status).toBe(201);
    });

    it('a user who belongs to no organization any more can still list, accept and create (X-Org-ID is not needed there)', async () => {
      const u = await spareUser();
      // They leave their only organization: a second owner keeps it.
      const inv = await invite(u.email, 'viewer');
      await t.http.post('/v1/organizations').set(bearer(u.token)).send({ name: 'temp' }).expect(201);
      const orgs = (await t.http.get('/v1/organizations').set(bearer(u.token))).body.organizations as { id: string }[];
      for (const o of orgs) {
        const other = await spareUser();
        const join = await invite(other.email, 'owner', { ...bearer(u.token), 'X-Org-ID': o.id });
        await accept(other.token, join.body.token).expect(200);
        await t.http.delete(`/v1/members/${u.id}`).set({ ...bearer(u.token), 'X-Org-ID': o.id }).expect(204);
      }
      const none = await t.http.get('/v1/organizations').set(bearer(u.token));
      expect(none.body).toEqual({ organizations: [] });
      const elsewhere = await t.http.get('/v1/wallet').set(bearer(u.token));
      expect(elsewhere.body).toEqual(envelope(elsewhere, 'forbidden', 'You are not a member of any organization'));
      const joined = await accept(u.token, inv.body.token).set('X-Org-ID', 'org_nonexistent');
      expect(joined.body).toEqual({ organization: { id: 'org_oi', name: expect.any(String), role: 'viewer' } });
      expect((await t.http.get('/v1/wallet').set(bearer(u.token))).status).toBe(200);
    });

    it("an invited user's sign-ins never reach an organization they did not join", async () => {
      const u = await spareUser();
      const inv = await invite(u.email, 'viewer');
      expect(inv.status).toBe(201);
      await login(u.email);
      const log = await t.http.get(`/v1/audit-log?actor_id=${u.id}`).set(as('owner'));
      expect(log.body).toEqual({ entries: [], next_cursor: null });
      expect(await t.sql("SELECT count(*)::int AS n FROM audit_log WHERE org_id = 'org_oi' AND actor_id = $1", [u.id])).toEqual([{ n: 0 }]);
      const members = await t.http.get('/v1/members').set(as('owner'));
      expect(members.body.members.map((m: { user_id: string }) => m.user_id)).not.toContain(u.id);
      // Once accepted, their sign-ins are the organization's business.
      await accept(u.token, inv.body.token).expect(200);
      await login(u.email);
      expect((await t.http.get(`/v1/audit-log?actor_id=${u.id}&action=auth.login`).set(as('owner'))).body.entries).toHaveLength(1);
    });
  });

  describe('API keys outlive people only on purpose', () => {
    /** A fresh admin of org_oi with one key of their own. */
    const adminWithKey = async () => {
      const u = await spareUser();
      const inv = await invite(u.email, 'admin');
      await accept(u.token, inv.body.token).expect(200);
      const key = await t.http.post('/v1/api-keys').set({ ...bearer(u.token), 'X-Org-ID': 'org_oi' }).send({ name: `deploy-${u.id.slice(4, 10)}`, scopes: ['vm:write'] });
      expect(key.status).toBe(201);
      tokens.push(key.body.token);
      return { u, key: { id: key.body.api_key.id as string, name: key.body.api_key.name as string, token: key.body.token as string } };
    };

    it('removing an admin without the parameter: their keys keep working, and member.remove lists them in api_keys_kept', async () => {
      const { u, key } = await adminWithKey();
      await t.http.delete(`/v1/members/${u.id}`).set(as('owner')).expect(204);
      expect((await t.http.get('/v1/volumes').set(bearer(key.token))).status).toBe(200);
      expect(await auditRows("action = 'member.remove' AND target_id = $1", [u.id])).toEqual([
        { actor_type: 'user', actor_id: userId.owner, action: 'member.remove', target_type: 'user', target_id: u.id, data: { email: u.email, role: 'admin', api_keys_kept: [{ id: key.id, name: key.name }], api_keys_revoked: [] } },
      ]);
    });

    it('with ?revoke_api_keys=true: their keys stop at once, in the same transaction, each audited', async () => {
      const { u, key } = await adminWithKey();
      const res = await t.http.delete(`/v1/members/${u.id}?revoke_api_keys=true`).set(as('owner'));
      expect(res.status).toBe(204);
      const refused = await t.http.get('/v1/volumes').set(bearer(key.token));
      expect(refused.body).toEqual(envelope(refused, 'unauthorized', 'Invalid token'));
      expect(await t.sql('SELECT revoked_at IS NOT NULL AS revoked FROM api_keys WHERE id = $1', [key.id])).toEqual([{ revoked: true }]);
      expect(await auditRows("(action = 'member.remove' AND target_id = $1) OR (action = 'api_key.revoke' AND target_id = $2)", [u.id, key.id])).toEqual([
        { actor_type: 'user', actor_id: userId.owner, action: 'api_key.revoke', target_type: 'api_key', target_id: key.id, data: { name: key.name, created_by: u.id } },
        { actor_type: 'user', actor_id: userId.owner, action: 'member.remove', target_type: 'user', target_id: u.id, data: { email: u.email, role: 'admin', api_keys_kept: [], api_keys_revoked: [{ id: key.id, name: key.name }] } },
      ]);
    });

    it('a demotion below admin works the same way; a bad value is 400 naming revoke_api_keys and changes nothing', async () => {
      const { u, key } = await adminWithKey();
      const bad = await t.http.patch(`/v1/members/${u.id}?revoke_api_keys=yes`).set(as('owner')).send({ role: 'viewer' });
      expect(bad.body).toEqual(envelope(bad, 'invalid_request', 'revoke_api_keys must be true or false', { field: 'revoke_api_keys' }));
      expect(await t.sql("SELECT role FROM memberships WHERE org_id = 'org_oi' AND user_id = $1", [u.id])).toEqual([{ role: 'admin' }]);
      const kept = await t.http.patch(`/v1/members/${u.id}`).set(as('owner')).send({ role: 'developer' });
      expect(kept.status).toBe(200);
      expect((await t.http.get('/v1/volumes').set(bearer(key.token))).status).toBe(200);
      await t.http.patch(`/v1/members/${u.id}`).set(as('owner')).send({ role: 'admin' }).expect(200);
      const demoted = await t.http.patch(`/v1/members/${u.id}?revoke_api_keys=true`).set(as('owner')).send({ role: 'viewer' });
      expect(demoted.body).toEqual({ user_id: u.id, email: u.email, role: 'viewer', joined_at: expect.stringMatching(ISO) });
      expect((await t.http.get('/v1/volumes').set(bearer(key.token))).status).toBe(401);
      expect((await auditRows("action = 'member.role_change' AND target_id = $1", [u.id])).map((r) => r.data)).toEqual([
        { email: u.email, from: 'admin', to: 'developer', api_keys_kept: [{ id: key.id, name: key.name }], api_keys_revoked: [] },
        { email: u.email, from: 'developer', to: 'admin' },
        { email: u.email, from: 'admin', to: 'viewer', api_keys_kept: [], api_keys_revoked: [{ id: key.id, name: key.name }] },
      ]);
    });
  });

  describe('the audit log for tools', () => {
    it('an audit:read key reads the log; a key acting is audited as {type: api_key, id, name}; sessions keep the admin and owner rule', async () => {
      const buy = await t.http.post('/v1/volumes').set(writeOnly).send({ name: 'audited-disk', region: 'id-jkt', size_gb: 100, term_months: 1, currency: 'USD' });
      expect(buy.status).toBe(202);
      const res = await t.http.get('/v1/audit-log?action=volume.create&limit=1').set(auditKey);
      expect(res.status).toBe(200);
      const [{ id: keyId }] = await t.sql<{ id: string }>("SELECT id FROM api_keys WHERE org_id = 'org_oi' AND name = 'ci-write'");
      expect(res.body).toEqual({
        entries: [
          {
            id: expect.stringMatching(/^aud_/),
            created_at: expect.stringMatching(ISO),
            action: 'volume.create',
            actor: { type: 'api_key', id: keyId, name: 'ci-write' },
            target: { type: 'volume', id: buy.body.volume.id },
            ip: '127.0.0.1',
            request_id: buy.headers['x-request-id'],
            client_request_id: null,
            data: expect.any(Object),
          },
        ],
        next_cursor: expect.any(String),
      });
      expect(res.headers['x-ratelimit-limit']).toBe('600');
      for (const key of [writeOnly, readOnly, billingRead]) {
        const refused = await t.http.get('/v1/audit-log').set(key);
        expect(refused.body).toEqual(envelope(refused, 'forbidden', 'The API key lacks the scope audit:read'));
      }
      for (const role of ['developer', 'viewer'] as const) expect((await t.http.get('/v1/audit-log').set(as(role))).status).toBe(403);
      expect((await t.http.get('/v1/audit-log').set(as('admin'))).status).toBe(200);
    });
  });

  it('no token of any kind (API key, session, invitation) is in an audit entry, a stored answer or an invitation row', async () => {
    const idem = 'grep-invite-1';
    const inv = await t.http.post('/v1/members').set(as('owner')).set('Idempotency-Key', idem).send({ email: 'grep@elsewhere.test', role: 'viewer' });
    expect(inv.status).toBe(201);
    tokens.push(inv.body.token);
    const key = await t.http.post('/v1/api-keys').set(as('owner')).set('Idempotency-Key', 'grep-key-1').send({ name: 'grep', scopes: ['audit:read'] });
    tokens.push(key.body.token);
    const dump = JSON.stringify(await t.sql('SELECT * FROM audit_log')) + JSON.stringify(await t.sql('SELECT * FROM idempotency_records')) + JSON.stringify(await t.sql('SELECT * FROM invitations'));
    const log = (await t.http.get('/v1/audit-log?limit=100').set(as('owner'))).text;
    expect(tokens.length).toBeGreaterThan(20);
    expect(['cds_inv_', 'cds_live_', 'cds_sess_'].map((prefix) => tokens.some((tk) => tk.startsWith(prefix)))).toEqual([true, true, true]);
    const found = tokens.filter((tk) => dump.includes(tk.slice(tk.lastIndexOf('_') + 1)) || log.includes(tk.slice(tk.lastIndexOf('_') + 1)));
    expect(found).toEqual([]);
  });

  it('cli verify names a user past the limit of organizations (the check behind the lock), and holds otherwise', async () => {
    const checks = new TypeOrmInvariantChecks(t.app.get(Db), t.app.get(BlockStorage), t.app.get(ComputeProvider));
    const verify = () => new VerifyInvariants(t.app.get(UnitOfWork), checks, new SystemClock()).execute();
    const named = async () => (await verify()).violations.filter((v) => v.check === 'accounts.organizations_per_user');
    expect(await named()).toEqual([]);
    const u = await spareUser();
    for (let i = 2; i <= 10; i++) await t.http.post('/v1/organizations').set(bearer(u.token)).send({ name: `V${i}` }).expect(201);
    expect(await named()).toEqual([]);
    // Past the lock, by hand: an 11th membership.
    await t.sql("INSERT INTO memberships (org_id, user_id, role) VALUES ('org_oi', $1, 'viewer')", [u.id]);
    expect(await named()).toEqual([
      { check: 'accounts.organizations_per_user', subject: u.id, message: 'user belongs to 11 organizations, over the limit of 10', details: { organizations: 11, limit: 10 } },
    ]);
    await t.sql("DELETE FROM memberships WHERE org_id = 'org_oi' AND user_id = $1", [u.id]);
  });

  it('an invitation expires after 7 days (404, the one message) and then lists as expired', async () => {
    const u = await spareUser();
    const inv = await invite(u.email, 'viewer');
    clock.advance(7 * DAY - 1000);
    const fresh = await login(u.email);
    const owner = { ...bearer(await login('owner@oi.test')), 'X-Org-ID': 'org_oi' };
    expect((await t.http.get('/v1/invitations?status=pending').set(owner)).body.invitations.map((i: { id: string }) => i.id)).toContain(inv.body.invitation.id);
    clock.advance(1000);
    const expired = await accept(fresh, inv.body.token);
    expect(expired.body).toEqual(envelope(expired, 'not_found', INVITATION_NOT_FOUND));
    const listed = await t.http.get('/v1/invitations?status=expired').set(owner);
    expect(listed.body.invitations.map((i: { id: string }) => i.id)).toContain(inv.body.invitation.id);
    expect((await t.http.get('/v1/invitations?status=pending').set(owner)).body.invitations.map((i: { id: string }) => i.id)).not.toContain(inv.body.invitation.id);
    expect(await t.sql("SELECT count(*)::int AS n FROM memberships WHERE org_id = 'org_oi' AND user_id = $1", [u.id])).toEqual([{ n: 0 }]);
  });
});
