import { createHash } from 'node:crypto';
import type { Response } from 'supertest';
import { CreateApiKey, OPERATOR, RevokeApiKey } from '../../src/modules/auth/application/api-keys.use-cases';
import { CREDENTIAL_CACHE_TTL_MS } from '../../src/modules/auth/application/credential-cache';
import { DomainError } from '../../src/shared/kernel/errors/domain-error';
import { OWNER_PASSWORD, apiToken, bearer, organization, region } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const SESSION_TOKEN = /^cds_sess_[A-Za-z0-9]{32,}$/;
const sha256 = (token: string): Buffer => createHash('sha256').update(token).digest();
const DAY_MS = 24 * 60 * 60 * 1000;

const envelope = (res: Response, code: string, message: string, details: Record<string, unknown> = {}) => ({
  error: { code, message, request_id: res.headers['x-request-id'], details },
});

/**
 * interface.md section 5 and decisions.md "Authentication": every 401 and 403 case, X-Org-ID,
 * signup/login/logout, API keys, and what they leave in the database.
 */
/** Waits out the credential cache (CREDENTIAL_CACHE_TTL_MS, decisions.md: revocations take effect within 1 s). */
const afterCacheLifetime = () => new Promise((resolve) => setTimeout(resolve, CREDENTIAL_CACHE_TTL_MS + 50));

describe('authentication: tokens, sessions, organizations, roles', () => {
  let t: TestApp;
  const rwA = apiToken('a', 'rw');
  const roA = apiToken('a', 'ro');
  const rwB = apiToken('b', 'rw');
  let ownerAId: string;

  const walletA = {
    balances: [
      { currency: 'USD', available: '100.00000', reserved: '0.00000' },
      { currency: 'IDR', available: '1500000', reserved: '0' },
    ],
  };
  const walletB = {
    balances: [
      { currency: 'USD', available: '7.00000', reserved: '0.00000' },
      { currency: 'IDR', available: '700', reserved: '0' },
    ],
  };

  const login = async (email: string, password = OWNER_PASSWORD): Promise<string> => {
    const res = await t.http.post('/v1/auth/login').send({ email, password });
    expect(res.status).toBe(200);
    return res.body.token as string;
  };

  beforeAll(async () => {
    t = await startTestApp();
    await t.seed({
      regions: [region()],
      organizations: [
        organization('a', {
          api_keys: [
            { name: 'rw', scopes: ['vm:read', 'vm:write'], token: rwA },
            { name: 'ro', scopes: ['vm:read'], token: roA },
          ],
        }),
        organization('b', {
          wallet: { USD: '7.00000', IDR: '700' },
          members: [
            { email: 'owner@b.test', password: OWNER_PASSWORD, role: 'owner' },
            // owner@a.test is a viewer here; org_b becomes their first organization below.
            { email: 'owner@a.test', password: OWNER_PASSWORD, role: 'viewer' },
            { email: 'dev@b.test', password: OWNER_PASSWORD, role: 'developer' },
          ],
        }),
        organization('c'),
      ],
    });
    [{ id: ownerAId }] = await t.sql<{ id: string }>("SELECT id FROM users WHERE email = 'owner@a.test'");
    // Memberships seeded in one transaction share a timestamp; make org_b clearly the older one
    // (by id, org_a would come first: the order must come from the membership date).
    await t.sql("UPDATE memberships SET created_at = created_at - interval '1 day' WHERE org_id = 'org_b' AND user_id = $1", [ownerAId]);
  });
  afterAll(async () => t?.close());

  describe('POST /v1/auth/signup', () => {
    it('creates the user, an organization they own and a 24 h session; stores only hashes', async () => {
      const before = Date.now();
      const res = await t.http.post('/v1/auth/signup').send({ email: 'New.User@Example.test', password: 'a long password', organization_name: 'New Co' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        token: expect.stringMatching(SESSION_TOKEN),
        expires_at: expect.stringMatching(ISO),
        user: { id: expect.stringMatching(/^usr_[A-Za-z0-9]{20,}$/), email: 'new.user@example.test', created_at: expect.stringMatching(ISO) },
        organization: { id: expect.stringMatching(/^org_[A-Za-z0-9]{20,}$/), name: 'New Co', role: 'owner', created_at: expect.stringMatching(ISO) },
      });
      const expiresAt = Date.parse(res.body.expires_at);
      expect(expiresAt).toBeGreaterThanOrEqual(before + DAY_MS - 1000);
      expect(expiresAt).toBeLessThanOrEqual(Date.now() + DAY_MS);

      const { token, user, organization: org } = res.body;
      expect(await t.sql('SELECT org_id, user_id, role FROM memberships WHERE user_id = $1', [user.id])).toEqual([{ org_id: org.id, user_id: user.id, role: 'owner' }]);
      const sessions = await t.sql<{ user_id: string; token_hash: Buffer; expires_at: Date; revoked_at: Date | null }>(
        'SELECT user_id, token_hash, expires_at, revoked_at FROM sessions WHERE user_id = $1',
        [user.id],
      );
      expect(sessions).toEqual([{ user_id: user.id, token_hash: sha256(token), expires_at: new Date(res.body.expires_at), revoked_at: null }]);
      const [stored] = await t.sql<{ password_hash: string }>('SELECT password_hash FROM users WHERE id = $1', [user.id]);
      expect(stored.password_hash).toMatch(/^scrypt\$16384\$8\$1\$/);
      const dump = await t.sql<{ row: string }>(
        `SELECT row_to_json(x)::text AS row FROM (
           SELECT u.*, s.token_hash::text AS h FROM users u JOIN sessions s ON s.user_id = u.id WHERE u.id = $1) x`,
        [user.id],
      );
      expect(dump[0].row).not.toContain('a long password');
      expect(dump[0].row).not.toContain(token);

      // The token works at once, for the new organization (nothing credited yet).
      const wallet = await t.http.get('/v1/wallet').set(bearer(token));
      expect(wallet.status).toBe(200);
      expect(wallet.body).toEqual({
        balances: [
          { currency: 'USD', available: '0.00000', reserved: '0.00000' },
          { currency: 'IDR', available: '0', reserved: '0' },
        ],
      });
    });

    it('answers an email already taken (any case) with 409 conflict, and writes nothing', async () => {
      const orgsBefore = await t.sql('SELECT id FROM organizations ORDER BY id');
      const res = await t.http.post('/v1/auth/signup').send({ email: 'OWNER@a.test', password: 'another password', organization_name: 'Dup' });
      expect(res.status).toBe(409);
      expect(res.body).toEqual(envelope(res, 'conflict', 'A user with this email exists already'));
      expect(await t.sql('SELECT id FROM organizations ORDER BY id')).toEqual(orgsBefore);
    });

    it.each([
      [{ password: 'a long password', organization_name: 'X' }, 'email', 'email is required'],
      [{ email: 5, password: 'a long password', organization_name: 'X' }, 'email', 'email must be a string'],
      [{ email: 'not-an-email', password: 'a long password', organization_name: 'X' }, 'email', 'email must be an email address'],
      [{ email: `${'x'.repeat(250)}@x.test`, password: 'a long password', organization_name: 'X' }, 'email', 'email must be at most 254 characters'],
      [{ email: 'x@x.test', password: 'short', organization_name: 'X' }, 'password', 'password must be 8 to 200 characters'],
      [{ email: 'x@x.test', organization_name: 'X' }, 'password', 'password is required'],
      [{ email: 'x@x.test', password: 12345678, organization_name: 'X' }, 'password', 'password must be a string'],
      [{ email: 'x@x.test', password: 'a long password' }, 'organization_name', 'organization_name is required'],
      [{ email: 'x@x.test', password: 'a long password', organization_name: null }, 'organization_name', 'organization_name is required'],
      [{ email: 'x@x.test', password: 'a long password', organization_name: '' }, 'organization_name', 'organization_name must be 1 to 200 characters'],
      [{ email: 'x@x.test', password: 'a long password', organization_name: ['X'] }, 'organization_name', 'organization_name must be a string'],
    ])('answers %j with 400 invalid_request naming %s, and creates no user', async (body, field, message) => {
      const res = await t.http.post('/v1/auth/signup').send(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(envelope(res, 'invalid_request', message, { field }));
      expect(await t.sql("SELECT id FROM users WHERE email IN ('x@x.test', 'not-an-email') OR email LIKE 'xxxx%'")).toEqual([]);
    });

    it('answers an email that outgrows 254 characters when lower-cased with 400 naming email, not a 500', async () => {
      // 'İ' lower-cases to two code units: 227 characters as sent, 257 as stored.
      const email = `${'İ'.repeat(30)}@${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.test`;
      expect(email.length).toBe(227);
      const res = await t.http.post('/v1/auth/signup').send({ email, password: 'a long password', organization_name: 'Long' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(envelope(res, 'invalid_request', 'email must be at most 254 characters once lower-cased', { field: 'email' }));
      expect(await t.sql("SELECT id FROM organizations WHERE name = 'Long'")).toEqual([]);
    });
  });

  describe('a NUL character (PostgreSQL text cannot hold it)', () => {
    it('in a signup member answers 400 naming it, and creates nothing (no 500 from the database)', async () => {
      const users = await t.sql('SELECT id FROM users ORDER BY id');
      const orgs = await t.sql('SELECT id FROM organizations ORDER BY id');
      const res = await t.http.post('/v1/auth/signup').send({ email: 'nul@x.test', password: 'a long password', organization_name: 'Nul\u0000Co' });
      expect(res.status).toBe(400);
      expect(res.headers['x-ratelimit-limit']).toBe('600');
      expect(res.body).toEqual(envelope(res, 'invalid_request', 'organization_name must not contain NUL (\\u0000) characters', { field: 'organization_name' }));
      expect(await t.sql('SELECT id FROM users ORDER BY id')).toEqual(users);
      expect(await t.sql('SELECT id FROM organizations ORDER BY id')).toEqual(orgs);
    });

    it('in a login email answers 400 naming it', async () => {
      const res = await t.http.post('/v1/auth/login').send({ email: 'owner@a.test\u0000', password: OWNER_PASSWORD });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(envelope(res, 'invalid_request', 'email must not contain NUL (\\u0000) characters', { field: 'email' }));
    });
  });

  describe('POST /v1/auth/login', () => {
    it('returns a 24 h session and the user\'s organizations, oldest membership first', async () => {
      const res = await t.http.post('/v1/auth/login').send({ email: 'Owner@A.test', password: OWNER_PASSWORD });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        token: expect.stringMatching(SESSION_TOKEN),
        expires_at: expect.stringMatching(ISO),
        user: { id: ownerAId, email: 'owner@a.test', created_at: expect.stringMatching(ISO) },
        organizations: [
          { id: 'org_b', name: 'Org b', role: 'viewer' },
          { id: 'org_a', name: 'Org a', role: 'owner' },
        ],
      });
      const [session] = await t.sql<{ expires_at: Date; created_at: Date }>('SELECT expires_at, created_at FROM sessions WHERE token_hash = $1', [sha256(res.body.token)]);
      expect(session.expires_at.getTime() - session.created_at.getTime()).toBeGreaterThan(DAY_MS - 5000);
      expect(session.expires_at.getTime() - session.created_at.getTime()).toBeLessThanOrEqual(DAY_MS + 5000);
      expect(session.expires_at.toISOString()).toBe(res.body.expires_at);
    });

    it('answers a wrong password and an unknown email with identical 401 invalid_credentials bodies', async () => {
      const sessionsBefore = await t.sql('SELECT id FROM sessions ORDER BY id');
      const wrongPassword = await t.http.post('/v1/auth/login').send({ email: 'owner@a.test', password: 'not the password' });
      const unknownEmail = await t.http.post('/v1/auth/login').send({ email: 'nobody@a.test', password: 'not the password' });
      for (const res of [wrongPassword, unknownEmail]) {
        expect(res.status).toBe(401);
        expect(res.body).toEqual(envelope(res, 'invalid_credentials', 'Wrong email or password'));
      }
      const strip = (res: Response) => ({ ...res.body.error, request_id: undefined });
      expect(strip(wrongPassword)).toEqual(strip(unknownEmail));
      expect(wrongPassword.headers['content-length']).toBe(unknownEmail.headers['content-length']);
      expect(await t.sql('SELECT id FROM sessions ORDER BY id')).toEqual(sessionsBefore);
    });

    it.each([
      [{ email: 'owner@a.test' }, 'password', 'password is required'],
      [{ password: OWNER_PASSWORD }, 'email', 'email is required'],
      [{ email: ['owner@a.test'], password: OWNER_PASSWORD }, 'email', 'email must be a string'],
      [{ email: 'owner@a.test', password: 12345678 }, 'password', 'password must be a string'],
      [{ email: 'owner@a.test', password: 'p'.repeat(201) }, 'password', 'password must be at most 200 characters'],
    ])('answers %j with 400 invalid_request naming %s, and opens no session', async (body, field, message) => {
      const sessionsBefore = await t.sql('SELECT id FROM sessions ORDER BY id');
      const res = await t.http.post('/v1/auth/login').send(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(envelope(res, 'invalid_request', message, { field }));
      expect(await t.sql('SELECT id FROM sessions ORDER BY id')).toEqual(sessionsBefore);
    });
  });

  describe('POST /v1/auth/logout', () => {
    it('revokes the session at once (204, then 401), and only that session', async () => {
      const token = await login('owner@c.test');
      const other = await login('owner@c.test');
      expect((await t.http.get('/v1/wallet').set(bearer(token))).status).toBe(200);

      const res = await t.http.post('/v1/auth/logout').set(bearer(token));
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      const [row] = await t.sql<{ revoked_at: Date | null }>('SELECT revoked_at FROM sessions WHERE token_hash = $1', [sha256(token)]);
      expect(row.revoked_at).toBeInstanceOf(Date);

      const after = await t.http.get('/v1/wallet').set(bearer(token));
      expect(after.status).toBe(401);
      expect(after.body).toEqual(envelope(after, 'unauthorized', 'Invalid token'));
      const again = await t.http.post('/v1/auth/logout').set(bearer(token));
      expect(again.status).toBe(401);
      expect((await t.http.get('/v1/wallet').set(bearer(other))).status).toBe(200);
    });

    it('is for sessions only: an API key gets 403 forbidden', async () => {
      const res = await t.http.post('/v1/auth/logout').set(bearer(rwA));
      expect(res.status).toBe(403);
      expect(res.body).toEqual(envelope(res, 'forbidden', 'This endpoint is for sessions only; API keys cannot use it'));
      expect((await t.http.get('/v1/wallet').set(bearer(rwA))).status).toBe(200);
    });
  });

  describe('401 unauthorized: missing, malformed, unknown, expired, revoked tokens (the last three alike: the answer tells nothing about a token)', () => {
    it.each([
      ['no Authorization header', undefined, 'Missing Authorization header; send "Authorization: Bearer <token>"'],
      ['another scheme', `Basic ${Buffer.from('a:b').toString('base64')}`, 'Malformed Authorization header; expected "Bearer <token>"'],
      ['Bearer without a token', 'Bearer', 'Malformed Authorization header; expected "Bearer <token>"'],
      ['a token without the scheme', apiToken('a', 'rw'), 'Malformed Authorization header; expected "Bearer <token>"'],
      ['a token of the wrong shape', 'Bearer cds_live_tooShort', 'Invalid token'],
      ['a token with an unknown prefix', `Bearer cds_test_${'a'.repeat(40)}`, 'Invalid token'],
      ['an unknown API key', `Bearer cds_live_${'Z'.repeat(40)}`, 'Invalid token'],
      ['an unknown session', `Bearer cds_sess_${'Z'.repeat(40)}`, 'Invalid token'],
    ])('%s', async (_name, authorization, message) => {
      const req = t.http.get('/v1/wallet');
      const res = await (authorization === undefined ? req : req.set('Authorization', authorization));
      expect(res.status).toBe(401);
      expect(res.body).toEqual(envelope(res, 'unauthorized', message));
    });

    it('an expired session (expires_at in the past; a change made in the database shows within the 1 s credential cache)', async () => {
      const token = await login('owner@c.test');
      expect((await t.http.get('/v1/wallet').set(bearer(token))).status).toBe(200);
      await t.sql("UPDATE sessions SET expires_at = now() - interval '1 second' WHERE token_hash = $1", [sha256(token)]);
      await afterCacheLifetime();
      const res = await t.http.get('/v1/wallet').set(bearer(token));
      expect(res.status).toBe(401);
      expect(res.body).toEqual(envelope(res, 'unauthorized', 'Invalid token'));
    });

    it('an API key revoked through the use case (as the CLI does): refused on the very next request', async () => {
      const { token, key } = await t.app.get(CreateApiKey).execute({ orgId: 'org_c', name: 'temp', scopes: ['vm:read'] }, OPERATOR);
      expect((await t.http.get('/v1/wallet').set(bearer(token))).status).toBe(200);
      await t.app.get(RevokeApiKey).execute({ id: key.id }, OPERATOR);
      const res = await t.http.get('/v1/wallet').set(bearer(token));
      expect(res.status).toBe(401);
      expect(res.body).toEqual(envelope(res, 'unauthorized', 'Invalid token'));
    });

    it('an API key revoked in the database directly (as another process would): refused within 1 s', async () => {
      const { token, key } = await t.app.get(CreateApiKey).execute({ orgId: 'org_c', name: 'temp2', scopes: ['vm:read'] }, OPERATOR);
      expect((await t.http.get('/v1/wallet').set(bearer(token))).status).toBe(200);
      await t.sql('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [key.id]);
      await afterCacheLifetime();
      const res = await t.http.get('/v1/wallet').set(bearer(token));
      expect(res.status).toBe(401);
      expect(res.body).toEqual(envelope(res, 'unauthorized', 'Invalid token'));
    });
  });

  describe('403 forbidden: scope missing, role too low', () => {
    it('an API key without vm:write may read but not renew; nothing is written', async () => {
      expect((await t.http.get('/v1/wallet').set(bearer(roA))).status).toBe(200);
      const res = await t.http.post('/v1/volumes/vol_adata1/renew').set(bearer(roA)).send({ term_months: 1 });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(envelope(res, 'forbidden', 'The API key lacks the scope vm:write'));
      expect(await t.sql('SELECT id FROM operations')).toEqual([]);
    });

    it('a viewer may read but not renew; a developer of the same organization passes the permission check', async () => {
      const viewer = await login('owner@a.test'); // viewer in org_b, their first organization
      expect((await t.http.get('/v1/volumes/vol_bdata1').set(bearer(viewer))).status).toBe(200);
      const res = await t.http.post('/v1/volumes/vol_bdata1/renew').set(bearer(viewer)).send({ term_months: 1 });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(envelope(res, 'forbidden', 'Role viewer may not do this; it needs one of: developer, admin, owner'));
      expect(await t.sql('SELECT id FROM operations')).toEqual([]);

      // The role is per organization: the same user owns org_a.
      const asOwner = await t.http.post('/v1/volumes/vol_adata1/renew').set(bearer(viewer)).set('X-Org-ID', 'org_a').send({ term_months: 'x' });
      expect(asOwner.status).toBe(400);
      const developer = await login('dev@b.test');
      const asDeveloper = await t.http.post('/v1/volumes/vol_bdata1/renew').set(bearer(developer)).send({ term_months: 'x' });
      expect(asDeveloper.status).toBe(400);
      expect(asDeveloper.body.error.details).toEqual({ field: 'term_months' });
    });
  });

  describe('X-Org-ID (sessions only) and organization scoping', () => {
    it('without X-Org-ID a session acts on the user\'s first organization by membership date', async () => {
      const token = await login('owner@a.test');
      const res = await t.http.get('/v1/wallet').set(bearer(token));
      expect(res.status).toBe(200);
      expect(res.body).toEqual(walletB);
    });

    it('X-Org-ID selects another organization the user is a member of', async () => {
      const token = await login('owner@a.test');
      const a = await t.http.get('/v1/wallet').set(bearer(token)).set('X-Org-ID', 'org_a');
      expect(a.status).toBe(200);
      expect(a.body).toEqual(walletA);
      const b = await t.http.get('/v1/wallet').set(bearer(token)).set('X-Org-ID', 'org_b');
      expect(b.body).toEqual(walletB);
    });

    it('X-Org-ID naming an organization the user is not a member of, or none at all: the same 403', async () => {
      const token = await login('owner@a.test');
      const notMember = await t.http.get('/v1/wallet').set(bearer(token)).set('X-Org-ID', 'org_c');
      const unknown = await t.http.get('/v1/wallet').set(bearer(token)).set('X-Org-ID', 'org_doesnotexist');
      const empty = await t.http.get('/v1/wallet').set(bearer(token)).set('X-Org-ID', '');
      for (const res of [notMember, unknown, empty]) {
        expect(res.status).toBe(403);
        expect(res.body).toEqual(envelope(res, 'forbidden', 'X-Org-ID names an organization you are not a member of'));
      }
    });

    it('an API key ignores X-Org-ID: it always acts on its own organization', async () => {
      for (const header of ['org_b', 'org_c', 'org_doesnotexist']) {
        const res = await t.http.get('/v1/wallet').set(bearer(rwA)).set('X-Org-ID', header);
        expect(res.status).toBe(200);
        expect(res.body).toEqual(walletA);
      }
    });

    it('ids of another organization answer 404 not_found, for API keys and sessions', async () => {
      const own = await t.http.get('/v1/volumes/vol_adata1').set(bearer(rwA));
      expect(own.status).toBe(200);
      expect(own.body.id).toBe('vol_adata1');

      const foreign = await t.http.get('/v1/volumes/vol_bdata1').set(bearer(rwA));
      expect(foreign.status).toBe(404);
      expect(foreign.body).toEqual(envelope(foreign, 'not_found', expect.any(String)));
      const unknown = await t.http.get('/v1/volumes/vol_nothere').set(bearer(rwA));
      expect(unknown.status).toBe(404);
      expect(unknown.body.error.message.replace('vol_nothere', 'ID')).toBe(foreign.body.error.message.replace('vol_bdata1', 'ID'));

      const renewForeign = await t.http.post('/v1/volumes/vol_bdata1/renew').set(bearer(rwA)).send({ term_months: 1 });
      expect(renewForeign.status).toBe(404);
      expect(renewForeign.body.error.code).toBe('not_found');
      expect(await t.sql('SELECT id FROM operations')).toEqual([]);

      const session = await login('owner@a.test');
      const viaOrgB = await t.http.get('/v1/volumes/vol_adata1').set(bearer(session)).set('X-Org-ID', 'org_b');
      expect(viaOrgB.status).toBe(404);
      const viaOrgA = await t.http.get('/v1/volumes/vol_adata1').set(bearer(session)).set('X-Org-ID', 'org_a');
      expect(viaOrgA.status).toBe(200);
      expect((await t.http.get('/v1/volumes/vol_bdata1').set(bearer(rwB))).status).toBe(200);
    });
  });

  describe('API keys', () => {
    it('allows 20 active keys per organization: the 21st is quota_exceeded and nothing is written', async () => {
      const create = t.app.get(CreateApiKey);
      const active = async () => Number((await t.sql<{ n: string }>("SELECT count(*)::text AS n FROM api_keys WHERE org_id = 'org_b' AND revoked_at IS NULL"))[0].n);
      const start = await active();
      for (let i = start; i < 20; i++) await create.execute({ orgId: 'org_b', name: `key ${i}`, scopes: ['vm:read'] }, OPERATOR);
      expect(await active()).toBe(20);

      let error: unknown;
      try {
        await create.execute({ orgId: 'org_b', name: 'one too many', scopes: ['vm:read'] }, OPERATOR);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(DomainError);
      expect(error).toMatchObject({ code: 'quota_exceeded', message: 'An organization may hold at most 20 active API keys; revoke one first', details: { limit: 20 } });
      expect(await active()).toBe(20);
      expect(await t.sql("SELECT id FROM api_keys WHERE name = 'one too many'")).toEqual([]);

      // Revoking one makes room again.
      const [{ id }] = await t.sql<{ id: string }>("SELECT id FROM api_keys WHERE org_id = 'org_b' AND name = 'key 19'");
      await t.app.get(RevokeApiKey).execute({ id }, OPERATOR);
      const { token } = await create.execute({ orgId: 'org_b', name: 'replacement', scopes: ['vm:read'] }, OPERATOR);
      expect(await active()).toBe(20);
      const [stored] = await t.sql<{ token_hash: Buffer }>("SELECT token_hash FROM api_keys WHERE name = 'replacement'");
      expect(stored.token_hash).toEqual(sha256(token));
    });
  });
});
