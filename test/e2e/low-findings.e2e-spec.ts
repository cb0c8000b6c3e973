import { OWNER_PASSWORD, apiToken, bearer, organization, region } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';

/**
 * Low findings of the third hardening round, each as a client meets it: valid-looking input
 * that used to answer 500, secrets cached by intermediaries, protection changes on a volume
 * being deleted.
 */
describe('low findings: 400 naming the field, prototype-named keys, lone surrogates, no-store, protection while deleting', () => {
  let t: TestApp;
  const rw = bearer(apiToken('lf', 'rw'));
  let session: { Authorization: string };

  beforeAll(async () => {
    t = await startTestApp();
    await t.seed({ regions: [region()], organizations: [organization('lf')] });
    const login = await t.http.post('/v1/auth/login').send({ email: 'owner@lf.test', password: OWNER_PASSWORD });
    expect(login.status).toBe(200);
    session = bearer(login.body.token);
  });
  afterAll(async () => t?.close());

  const invalid = (res: { status: number; body: unknown; headers: Record<string, string> }, message: string, field: string) => {
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { code: 'invalid_request', message, request_id: res.headers['x-request-id'], details: { field } } });
  };

  it('API key expires_at in ISO 8601 basic format ("20300101T000000Z"): 400 naming expires_at, no key created', async () => {
    const res = await t.http.post('/v1/api-keys').set(session).send({ name: 'basic', scopes: ['vm:read'], expires_at: '20300101T000000Z' });
    invalid(res, 'expires_at must be an ISO 8601 timestamp such as 2027-01-01T00:00:00Z', 'expires_at');
    expect(await t.sql(`SELECT id FROM api_keys WHERE name = 'basic'`)).toEqual([]);
  });

  it.each(['constructor', '__proto__', 'prototype'])('a label key %s is an ordinary label', async (key) => {
    const res = await t.http.patch('/v1/volumes/vol_lfdata1').set(rw).send({ labels: { [key]: 'x' } });
    expect(res.status).toBe(200);
    expect(res.body.labels).toEqual(JSON.parse(`{"${key}":"x"}`));
    expect(await t.sql(`SELECT labels FROM volumes WHERE id = 'vol_lfdata1'`)).toEqual([{ labels: JSON.parse(`{"${key}":"x"}`) }]);
    const filtered = await t.http.get(`/v1/volumes?label=${key}=x`).set(rw);
    expect(filtered.status).toBe(200);
    expect(filtered.body.volumes.map((v: { id: string }) => v.id)).toEqual(['vol_lfdata1']);
  });

  it('a lone UTF-16 surrogate in note or in a label value: 400 naming the member, nothing written', async () => {
    await t.http.patch('/v1/volumes/vol_lfdata1').set(rw).send({ note: 'before', labels: {} });
    const note = await t.http.patch('/v1/volumes/vol_lfdata1').set(rw).set('Content-Type', 'application/json').send('{"note":"bad \\ud800 note"}');
    invalid(note, 'note must be valid Unicode text (no lone UTF-16 surrogates)', 'note');
    const label = await t.http.patch('/v1/volumes/vol_lfdata1').set(rw).set('Content-Type', 'application/json').send('{"labels":{"env":"\\udfff"}}');
    invalid(label, 'labels.env must be valid Unicode text (no lone UTF-16 surrogates)', 'labels.env');
    const key = await t.http.patch('/v1/volumes/vol_lfdata1').set(rw).set('Content-Type', 'application/json').send('{"labels":{"e\\ud800":"x"}}');
    expect(key.status).toBe(400);
    expect(key.body.error.details).toEqual({ field: 'labels.e\ud800' });
    expect(await t.sql(`SELECT note, labels FROM volumes WHERE id = 'vol_lfdata1'`)).toEqual([{ note: 'before', labels: {} }]);
  });

  it('answers carrying a secret are not to be stored: Cache-Control no-store on signup, login and API key creation', async () => {
    const signup = await t.http.post('/v1/auth/signup').send({ email: 'new@lf.test', password: 'a long password', organization_name: 'New' });
    expect(signup.status).toBe(201);
    expect(signup.headers['cache-control']).toBe('no-store');
    const login = await t.http.post('/v1/auth/login').send({ email: 'new@lf.test', password: 'a long password' });
    expect(login.status).toBe(200);
    expect(login.headers['cache-control']).toBe('no-store');
    const key = await t.http.post('/v1/api-keys').set(session).send({ name: 'ci-2', scopes: ['vm:read'] });
    expect(key.status).toBe(201);
    expect(key.body.token).toMatch(/^cds_/);
    expect(key.headers['cache-control']).toBe('no-store');
    const replay = await t.http.post('/v1/api-keys').set(session).set('Idempotency-Key', 'nostore-1').send({ name: 'ci-3', scopes: ['vm:read'] });
    const again = await t.http.post('/v1/api-keys').set(session).set('Idempotency-Key', 'nostore-1').send({ name: 'ci-3', scopes: ['vm:read'] });
    expect([replay.status, again.status, again.headers['idempotent-replayed']]).toEqual([201, 201, 'true']);
    expect(again.headers['cache-control']).toBe('no-store');
  });

  it('Cache-Control no-store on the other answers carrying a secret: invitations (both routes), webhook endpoint creation and secret rotation, replays included', async () => {
    const invitation = await t.http.post('/v1/invitations').set(session).set('Idempotency-Key', 'nostore-inv').send({ email: 'invitee-1@lf.test', role: 'developer' });
    expect(invitation.status).toBe(201);
    expect(invitation.body.token).toEqual(expect.any(String));
    expect(invitation.headers['cache-control']).toBe('no-store');
    const replayed = await t.http.post('/v1/invitations').set(session).set('Idempotency-Key', 'nostore-inv').send({ email: 'invitee-1@lf.test', role: 'developer' });
    expect([replayed.status, replayed.headers['idempotent-replayed'], replayed.headers['cache-control']]).toEqual([201, 'true', 'no-store']);
    const member = await t.http.post('/v1/members').set(session).send({ email: 'invitee-2@lf.test', role: 'developer' });
    expect(member.status).toBe(201);
    expect(member.headers['cache-control']).toBe('no-store');
    const endpoint = await t.http.post('/v1/webhook-endpoints').set(session).send({ url: 'https://93.184.216.34/hook', events: ['server.deleted'] });
    expect(endpoint.status).toBe(201);
    expect(endpoint.body.secret).toMatch(/^whsec_/);
    expect(endpoint.headers['cache-control']).toBe('no-store');
    const rotated = await t.http.post(`/v1/webhook-endpoints/${endpoint.body.webhook_endpoint.id}/rotate-secret`).set(session).send();
    expect(rotated.status).toBe(200);
    expect(rotated.headers['cache-control']).toBe('no-store');
    // Rotating again during the overlap: 409; with expire_previous the overlap ends at once (a leaked secret stops signing).
    const rotateUrl = `/v1/webhook-endpoints/${endpoint.body.webhook_endpoint.id}/rotate-secret`;
    const again = await t.http.post(rotateUrl).set(session).send({});
    expect([again.status, again.body.error?.code]).toEqual([409, 'invalid_state']);
    const typo = await t.http.post(rotateUrl).set(session).send({ expire_previous: 'yes' });
    expect([typo.status, typo.body.error?.details]).toEqual([400, { field: 'expire_previous' }]);
    const expired = await t.http.post(rotateUrl).set(session).send({ expire_previous: true });
    expect(expired.status).toBe(200);
    expect(expired.body.secret).toMatch(/^whsec_/);
    expect(expired.body.secret).not.toBe(rotated.body.secret);
    expect(expired.body.webhook_endpoint.secret_rotation_ends_at).toBeNull();
    expect(await t.sql(`SELECT previous_secret_sealed, secret_rotation_ends_at FROM webhook_endpoints WHERE id = $1`, [endpoint.body.webhook_endpoint.id])).toEqual([
      { previous_secret_sealed: null, secret_rotation_ends_at: null },
    ]);
    // An answer without a secret keeps the default.
    const listed = await t.http.get('/v1/webhook-endpoints').set(session);
    expect(listed.headers['cache-control']).not.toBe('no-store');
  });

  it('delete_protection on a volume being deleted: 409 invalid_state, unchanged', async () => {
    await t.sql(`UPDATE volumes SET status = 'deleting', server_id = NULL, mount_path = NULL, mounted = false WHERE id = 'vol_lfdata1'`);
    for (const value of [true, false]) {
      const res = await t.http.patch('/v1/volumes/vol_lfdata1').set(session).send({ delete_protection: value });
      expect(res.status).toBe(409);
      expect(res.body).toEqual({
        error: { code: 'invalid_state', message: 'Volume vol_lfdata1 is being deleted; its delete_protection cannot change', request_id: res.headers['x-request-id'], details: {} },
      });
    }
    expect(await t.sql(`SELECT delete_protection FROM volumes WHERE id = 'vol_lfdata1'`)).toEqual([{ delete_protection: false }]);
  });
});
