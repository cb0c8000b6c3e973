import type { Response } from 'supertest';
import { idempotencyKeyDigest } from '../../src/modules/idempotency/domain/idempotency';
import { usingPostgres } from '../support/database';
import { OWNER_PASSWORD, bearer } from '../support/fixtures';
import { KEY_ID, envelope, teamSeed } from '../support/accounts';
import { TestApp, startTestApp } from '../support/test-app';

/**
 * lifecycle.md: "Every new POST and DELETE below accepts Idempotency-Key … and stores its 2xx,
 * 402, 404 and 409 answers": POST/DELETE /v1/api-keys and POST/DELETE /v1/members, on both
 * engines. The create's answer holds the token: it is stored encrypted under the raw key, which
 * the table keeps only as a SHA-256 (README "Idempotency-Key").
 */
const SEALED_CONFLICT =
  'This Idempotency-Key was already used with a different request, or by another caller (an answer holding a secret replays only to the caller who made it); use a new key for a new request';

describe('Idempotency-Key on the account routes', () => {
  let t: TestApp;
  let owner: Record<string, string>;
  let spares = 0;

  const login = async (email: string): Promise<string> => {
    const res = await t.http.post('/v1/auth/login').send({ email, password: OWNER_PASSWORD });
    expect(res.status).toBe(200);
    return res.body.token as string;
  };
  const spareUser = async (): Promise<{ id: string; email: string; token: string }> => {
    const email = `idem-spare${++spares}@elsewhere.test`;
    const res = await t.http.post('/v1/auth/signup').send({ email, password: OWNER_PASSWORD, organization_name: `Spare ${spares}` });
    expect(res.status).toBe(201);
    return { id: res.body.user.id, email, token: res.body.token };
  };
  /** The replay of `first`: same status and bytes, Idempotent-Replayed, the new request's X-Request-Id. */
  const expectReplay = (again: Response, first: Response) => {
    expect(again.status).toBe(first.status);
    expect(again.text).toBe(first.text);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
  };
  const count = async (sql: string, params: unknown[] = []) => (await t.sql<{ n: number }>(sql, params))[0].n;

  beforeAll(async () => {
    t = await startTestApp(usingPostgres() ? { dbPoolSize: 10 } : {});
    await t.seed({ ...teamSeed('ia', 'iq'), organizations: teamSeed('ia', 'iq').organizations.map((o) => ({ ...o, api_keys: [] })) });
    owner = { ...bearer(await login('owner@ia.test')), 'X-Org-ID': 'org_ia' };
  });
  afterAll(async () => t?.close());

  describe('POST /v1/api-keys', () => {
    it('a retry gets the same 201 with the same token and creates no second key; the stored row holds neither the token nor the key', async () => {
      const idem = 'create-deploy-key-1';
      const body = { name: 'deploy', scopes: ['vm:read', 'vm:write'] };
      const first = await t.http.post('/v1/api-keys').set(owner).set('Idempotency-Key', idem).send(body);
      expect(first.status).toBe(201);
      expect(first.body).toEqual({
        api_key: expect.objectContaining({ id: expect.stringMatching(KEY_ID), name: 'deploy', scopes: ['vm:read', 'vm:write'], revoked_at: null }),
        token: expect.stringMatching(/^cds_live_[A-Za-z0-9]{40}$/),
      });
      const token: string = first.body.token;
      const again = await t.http.post('/v1/api-keys').set(owner).set('Idempotency-Key', idem).send({ scopes: ['vm:read', 'vm:write'], name: 'deploy' });
      expectReplay(again, first);
      expect(again.body.token).toBe(token);
      // The replayed token is the key's: it authenticates.
      expect((await t.http.get('/v1/wallet').set(bearer(token))).status).toBe(200);

      expect(await count("SELECT count(*)::int AS n FROM api_keys WHERE org_id = 'org_ia' AND name = 'deploy'")).toBe(1);
      expect(await count("SELECT count(*)::int AS n FROM audit_log WHERE org_id = 'org_ia' AND action = 'api_key.create' AND target_id = $1", [first.body.api_key.id])).toBe(1);

      const rows = await t.sql<{ key_sha256: string; status_code: number; response_body: string }>(
        "SELECT key_sha256, status_code, response_body FROM idempotency_records WHERE org_id = 'org_ia'",
      );
      expect(rows).toEqual([{ key_sha256: idempotencyKeyDigest(idem), status_code: 201, response_body: expect.stringMatching(/^sealed:v1:[A-Za-z0-9+/]+=*$/) }]);
      const everything = JSON.stringify(await t.sql('SELECT * FROM idempotency_records'));
      expect(everything).not.toContain(token.slice(9)); // the token's random part, anywhere
      expect(everything).not.toContain(idem);
      expect(everything).not.toContain(first.body.api_key.id); // the whole answer is sealed
    });

    it('the same key with another body is 409 idempotency_conflict, and no key is created', async () => {
      const idem = 'create-conflict-1';
      const first = await t.http.post('/v1/api-keys').set(owner).set('Idempotency-Key', idem).send({ name: 'one', scopes: ['vm:read'] });
      expect(first.status).toBe(201);
      const before = await count("SELECT count(*)::int AS n FROM api_keys WHERE org_id = 'org_ia'");
      const other = await t.http.post('/v1/api-keys').set(owner).set('Idempotency-Key', idem).send({ name: 'two', scopes: ['vm:read'] });
      expect(other.status).toBe(409);
      expect(other.body).toEqual(
        envelope(other, 'idempotency_conflict', SEALED_CONFLICT),
      );
      expect(other.text).not.toContain(first.body.token);
      expect(await count("SELECT count(*)::int AS n FROM api_keys WHERE org_id = 'org_ia'")).toBe(before);
      expect(await count("SELECT count(*)::int AS n FROM api_keys WHERE org_id = 'org_ia' AND name = 'two'")).toBe(0);
    });

    it('two identical requests with one key at the same moment: one key, both answers carry its token', async () => {
      const idem = 'create-pair-1';
      const send = () => t.http.post('/v1/api-keys').set(owner).set('Idempotency-Key', idem).send({ name: 'pair', scopes: ['vm:read'] });
      const [a, b] = await Promise.all([send(), send()]);
      expect([a.status, b.status]).toEqual([201, 201]);
      expect(a.text).toBe(b.text);
      expect([a.headers['idempotent-replayed'], b.headers['idempotent-replayed']].sort()).toEqual(['true', undefined]);
      expect(await t.sql("SELECT id FROM api_keys WHERE org_id = 'org_ia' AND name = 'pair'")).toEqual([{ id: a.body.api_key.id }]);
    });

    it('stores the 409 quota_exceeded: the retry replays it even after a key was revoked; a new key creates', async () => {
      const q = { ...bearer(await login('owner@iq.test')), 'X-Org-ID': 'org_iq' };
      for (let i = 0; i < 20; i++) await t.http.post('/v1/api-keys').set(q).send({ name: `fill${i}`, scopes: ['vm:read'] }).expect(201);
      const full = await t.http.post('/v1/api-keys').set(q).set('Idempotency-Key', 'quota-1').send({ name: 'extra', scopes: ['vm:read'] });
      expect(full.status).toBe(409);
      expect(full.body).toEqual(envelope(full, 'quota_exceeded', 'An organization may hold at most 20 active API keys; revoke one first', { limit: 20 }));
      const [{ id }] = await t.sql<{ id: string }>("SELECT id FROM api_keys WHERE org_id = 'org_iq' AND name = 'fill0'");
      await t.http.delete(`/v1/api-keys/${id}`).set(q).expect(204);
      expectReplay(await t.http.post('/v1/api-keys').set(q).set('Idempotency-Key', 'quota-1').send({ name: 'extra', scopes: ['vm:read'] }), full);
      expect((await t.http.post('/v1/api-keys').set(q).set('Idempotency-Key', 'quota-2').send({ name: 'extra', scopes: ['vm:read'] })).status).toBe(201);
    });

    it('refuses a bad Idempotency-Key with 400 naming the header, and stores nothing', async () => {
      const res = await t.http.post('/v1/api-keys').set(owner).set('Idempotency-Key', 'tab\there').send({ name: 'bad', scopes: ['vm:read'] });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(envelope(res, 'invalid_request', 'Idempotency-Key must be 1 to 255 printable ASCII characters', { field: 'Idempotency-Key' }));
      expect(await count("SELECT count(*)::int AS n FROM api_keys WHERE org_id = 'org_ia' AND name = 'bad'")).toBe(0);
    });
  });

  describe('DELETE /v1/api-keys/{id}', () => {
    it('204 replayed with Idempotent-Replayed and one audit row; an unknown id is a stored 404', async () => {
      const id = (await t.http.post('/v1/api-keys').set(owner).send({ name: 'to-revoke', scopes: ['vm:read'] })).body.api_key.id as string;
      const first = await t.http.delete(`/v1/api-keys/${id}`).set(owner).set('Idempotency-Key', 'revoke-1');
      expect(first.status).toBe(204);
      expect(first.text).toBe('');
      expectReplay(await t.http.delete(`/v1/api-keys/${id}`).set(owner).set('Idempotency-Key', 'revoke-1'), first);
      expect(await count("SELECT count(*)::int AS n FROM audit_log WHERE action = 'api_key.revoke' AND target_id = $1", [id])).toBe(1);
      expect(await t.sql('SELECT revoked_at IS NOT NULL AS revoked FROM api_keys WHERE id = $1', [id])).toEqual([{ revoked: true }]);

      const missing = await t.http.delete('/v1/api-keys/key_doesnotexist000000000').set(owner).set('Idempotency-Key', 'revoke-404');
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual(envelope(missing, 'not_found', 'API key key_doesnotexist000000000 not found'));
      expectReplay(await t.http.delete('/v1/api-keys/key_doesnotexist000000000').set(owner).set('Idempotency-Key', 'revoke-404'), missing);
      // The same key on another path is another request.
      const elsewhere = await t.http.delete(`/v1/api-keys/${id}`).set(owner).set('Idempotency-Key', 'revoke-404');
      expect(elsewhere.status).toBe(409);
      expect(elsewhere.body.error.code).toBe('idempotency_conflict');
    });
  });

  describe('answers holding a secret replay only to the caller who made them', () => {
    it('POST /v1/api-keys: another admin (or the same admin through another session) repeating the key: 409 idempotency_conflict, no key, no token; the creator gets the same token', async () => {
      const admin = { ...bearer(await login('admin@ia.test')), 'X-Org-ID': 'org_ia' };
      const idem = 'shared-ci-key-1';
      const body = { name: 'ci-shared', scopes: ['vm:write'] };
      const first = await t.http.post('/v1/api-keys').set(owner).set('Idempotency-Key', idem).send(body);
      expect(first.status).toBe(201);
      const stolen = await t.http.post('/v1/api-keys').set(admin).set('Idempotency-Key', idem).send(body);
      expect(stolen.status).toBe(409);
      expect(stolen.body).toEqual(envelope(stolen, 'idempotency_conflict', SEALED_CONFLICT));
      expect(stolen.text).not.toContain(first.body.token.slice(9));
      expect(stolen.headers['idempotent-replayed']).toBeUndefined();
      // The creator, in a new session of theirs, gets the same answer and token.
      const ownerAgain = { ...bearer(await login('owner@ia.test')), 'X-Org-ID': 'org_ia' };
      const replay = await t.http.post('/v1/api-keys').set(ownerAgain).set('Idempotency-Key', idem).send(body);
      expectReplay(replay, first);
      expect(replay.body.token).toBe(first.body.token);
      expect(await count("SELECT count(*)::int AS n FROM api_keys WHERE org_id = 'org_ia' AND name = 'ci-shared'")).toBe(1);
    });

    it('POST /v1/members and POST /v1/invitations: the token replays to its inviter only', async () => {
      const admin = { ...bearer(await login('admin@ia.test')), 'X-Org-ID': 'org_ia' };
      for (const path of ['/v1/members', '/v1/invitations']) {
        const idem = `invite-shared-${path}`;
        const body = { email: `shared${path.length}@elsewhere.test`, role: 'viewer' };
        const first = await t.http.post(path).set(owner).set('Idempotency-Key', idem).send(body);
        expect(first.status).toBe(201);
        expectReplay(await t.http.post(path).set(owner).set('Idempotency-Key', idem).send(body), first);
        const stolen = await t.http.post(path).set(admin).set('Idempotency-Key', idem).send(body);
        expect(stolen.body).toEqual(envelope(stolen, 'idempotency_conflict', SEALED_CONFLICT));
        expect(await count('SELECT count(*)::int AS n FROM invitations WHERE email = $1', [body.email])).toBe(1);
        const stored = JSON.stringify(await t.sql('SELECT * FROM idempotency_records'));
        expect(stored).not.toContain(first.body.token.slice(8));
        expect(stored).not.toContain(first.body.invitation.id);
      }
    });
  });

  describe('POST /v1/members', () => {
    it('invites: 201 replayed (same token), one invitation and one audit row; the same answer whether or not the email has an account; 409 conflict stored', async () => {
      const u = await spareUser();
      const first = await t.http.post('/v1/members').set(owner).set('Idempotency-Key', 'add-1').send({ email: u.email, role: 'developer' });
      expect(first.status).toBe(201);
      expect(Object.keys(first.body)).toEqual(['invitation', 'token']);
      expectReplay(await t.http.post('/v1/members').set(owner).set('Idempotency-Key', 'add-1').send({ role: 'developer', email: u.email }), first);
      expect(await count("SELECT count(*)::int AS n FROM audit_log WHERE action = 'invitation.create' AND target_id = $1", [first.body.invitation.id])).toBe(1);
      expect(await count("SELECT count(*)::int AS n FROM memberships WHERE org_id = 'org_ia' AND user_id = $1", [u.id])).toBe(0);

      // No account behind the email: the same status, the same shape, the same headers.
      const unknown = await t.http.post('/v1/members').set(owner).set('Idempotency-Key', 'add-3').send({ email: 'nobody@nowhere.test', role: 'developer' });
      expect(unknown.status).toBe(201);
      const shape = (r: Response) => ({ ...r.body, invitation: { ...r.body.invitation, id: 'x', email: 'x', created_at: 'x', expires_at: 'x' }, token: 'x' });
      expect(shape(unknown)).toEqual(shape(first));
      expect(Object.keys(unknown.headers).sort()).toEqual(Object.keys(first.headers).sort());

      await t.http.post('/v1/invitations/accept').set(bearer(u.token)).send({ token: first.body.token }).expect(200);
      const conflict = await t.http.post('/v1/members').set(owner).set('Idempotency-Key', 'add-2').send({ email: u.email, role: 'developer' });
      expect(conflict.status).toBe(409);
      expect(conflict.body).toEqual(envelope(conflict, 'conflict', 'This email belongs to a member of the organization already'));
      expectReplay(await t.http.post('/v1/members').set(owner).set('Idempotency-Key', 'add-2').send({ email: u.email, role: 'developer' }), conflict);
    });
  });

  describe('DELETE /v1/members/{user_id}', () => {
    it('204 replayed with one audit row; the last owner is a stored 409 conflict', async () => {
      const u = await spareUser();
      const invited = await t.http.post('/v1/invitations').set(owner).send({ email: u.email, role: 'viewer' }).expect(201);
      await t.http.post('/v1/invitations/accept').set(bearer(u.token)).send({ token: invited.body.token }).expect(200);
      const first = await t.http.delete(`/v1/members/${u.id}`).set(owner).set('Idempotency-Key', 'remove-1');
      expect(first.status).toBe(204);
      expectReplay(await t.http.delete(`/v1/members/${u.id}`).set(owner).set('Idempotency-Key', 'remove-1'), first);
      expect(await count("SELECT count(*)::int AS n FROM audit_log WHERE action = 'member.remove' AND target_id = $1", [u.id])).toBe(1);

      const [{ id: ownerId }] = await t.sql<{ id: string }>("SELECT id FROM users WHERE email = 'owner@ia.test'");
      const last = await t.http.delete(`/v1/members/${ownerId}`).set(owner).set('Idempotency-Key', 'remove-2');
      expect(last.status).toBe(409);
      expect(last.body).toEqual(envelope(last, 'conflict', 'An organization keeps at least one owner: this member is its last owner'));
      expectReplay(await t.http.delete(`/v1/members/${ownerId}`).set(owner).set('Idempotency-Key', 'remove-2'), last);
      expect(await count("SELECT count(*)::int AS n FROM memberships WHERE org_id = 'org_ia' AND user_id = $1", [ownerId])).toBe(1);
    });
  });

  it('documents the header on the four routes, Idempotent-Replayed on each stored answer, and 409 idempotency_conflict; PATCH takes no key', async () => {
    const doc = (await t.http.get('/v1/openapi.json')).body;
    const routes: [string, string, string[]][] = [
      ['/v1/api-keys', 'post', ['201', '409']],
      ['/v1/api-keys/{id}', 'delete', ['204', '404']],
      ['/v1/members', 'post', ['201', '409']],
      ['/v1/members/{user_id}', 'delete', ['204', '404', '409']],
    ];
    for (const [path, method, stored] of routes) {
      const op = doc.paths[path][method];
      expect({ path, header: op.parameters.find((p: { name: string }) => p.name === 'Idempotency-Key')?.in }).toEqual({ path, header: 'header' });
      const replayed = Object.entries(op.responses as Record<string, { headers?: Record<string, unknown> }>)
        .filter(([, r]) => r.headers?.['Idempotent-Replayed'])
        .map(([status]) => status);
      expect({ path, replayed }).toEqual({ path, replayed: stored });
      expect({ path, conflict: Object.keys(op.responses['409'].content['application/json'].examples) }).toEqual({ path, conflict: expect.arrayContaining(['idempotency_conflict']) });
    }
    expect(doc.paths['/v1/members/{user_id}'].patch.parameters.map((p: { name: string }) => p.name)).not.toContain('Idempotency-Key');
  });
});
