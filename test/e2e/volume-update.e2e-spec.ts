import { OWNER_PASSWORD, apiToken, bearer, organization, region } from '../support/fixtures';
import { errorBody } from '../support/assertions';
import { TestApp, startTestApp } from '../support/test-app';

/** PATCH /v1/volumes/{id} (lifecycle.md "Attach, detach, delete, edit"): whole bodies, the row and the audit log left behind. */
describe('PATCH /v1/volumes/{id}', () => {
  let t: TestApp;
  const rw = bearer(apiToken('upd', 'rw'));
  const ro = bearer(apiToken('upd', 'ro'));
  const session: Record<string, { token: string; userId: string }> = {};
  let keyId: string;


  beforeAll(async () => {
    t = await startTestApp();
    const base = organization('upd');
    const volume = base.volumes[0];
    await t.seed({
      regions: [region()],
      organizations: [
        {
          ...base,
          members: [
            { email: 'owner@upd.test', password: OWNER_PASSWORD, role: 'owner' },
            { email: 'admin@upd.test', password: OWNER_PASSWORD, role: 'admin' },
            { email: 'dev@upd.test', password: OWNER_PASSWORD, role: 'developer' },
            { email: 'viewer@upd.test', password: OWNER_PASSWORD, role: 'viewer' },
          ],
          api_keys: [...base.api_keys, { name: 'ro', scopes: ['vm:read'], token: apiToken('upd', 'ro') }],
          volumes: [
            { ...volume, id: 'vol_upda', name: 'data-1' },
            { ...volume, id: 'vol_updb', name: 'logs', server: undefined, mount_path: undefined, note: 'old note' },
            { ...volume, id: 'vol_updc', name: 'gone', server: undefined, mount_path: undefined },
          ],
        },
        organization('updx'),
      ],
    });
    await t.sql(`UPDATE volumes SET status = 'deleted', deleted_at = '2026-11-20T08:00:00Z' WHERE id = 'vol_updc'`);
    for (const role of ['owner', 'admin', 'dev', 'viewer']) {
      const res = await t.http.post('/v1/auth/login').send({ email: `${role}@upd.test`, password: OWNER_PASSWORD });
      expect(res.status).toBe(200);
      session[role] = { token: res.body.token, userId: res.body.user.id };
    }
    [{ id: keyId }] = await t.sql<{ id: string }>(`SELECT id FROM api_keys WHERE org_id = 'org_upd' AND name = 'ci'`);
  });
  afterAll(async () => t?.close());

  const as = (role: string) => bearer(session[role].token);
  const row = async (id: string) =>
    (await t.sql(`SELECT name, note, labels, delete_protection FROM volumes WHERE id = $1`, [id]))[0];
  const auditRows = async (id: string) =>
    t.sql(`SELECT org_id, actor_type, actor_id, action, target_id, ip_address, data FROM audit_log WHERE action = 'volume.update' AND target_id = $1 ORDER BY id`, [id]);
  const get = async (id: string) => (await t.http.get(`/v1/volumes/${id}`).set(rw)).body;

  it('changes each member, answers 200 with the whole Volume, and writes one audit row with the old and new values', async () => {
    const before = await get('vol_upda');
    const res = await t.http
      .patch('/v1/volumes/vol_upda')
      .set(rw)
      .send({ name: 'data-main', note: 'primary', labels: { env: 'prod', 'app.kubernetes.io/name': 'pg' }, delete_protection: true });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['x-ratelimit-limit']).toBe('600');
    expect(res.body).toEqual({
      ...before,
      name: 'data-main',
      note: 'primary',
      labels: { env: 'prod', 'app.kubernetes.io/name': 'pg' },
      delete_protection: true,
    });
    expect(await get('vol_upda')).toEqual(res.body);
    expect(await row('vol_upda')).toEqual({ name: 'data-main', note: 'primary', labels: { env: 'prod', 'app.kubernetes.io/name': 'pg' }, delete_protection: true });
    expect(await auditRows('vol_upda')).toEqual([
      {
        org_id: 'org_upd', actor_type: 'api_key', actor_id: keyId, action: 'volume.update', target_id: 'vol_upda', ip_address: expect.any(String),
        data: {
          changes: {
            name: { old: 'data-1', new: 'data-main' },
            note: { old: null, new: 'primary' },
            labels: { old: {}, new: { env: 'prod', 'app.kubernetes.io/name': 'pg' } },
            delete_protection: { old: false, new: true },
          },
        },
      },
    ]);
  });

  it('labels replaces the whole map; the audit row names only what changed', async () => {
    await t.sql(`DELETE FROM audit_log WHERE target_id = 'vol_updb'`);
    const first = await t.http.patch('/v1/volumes/vol_updb').set(as('dev')).send({ labels: { env: 'prod', team: 'data' } });
    expect(first.status).toBe(200);
    expect(first.body.labels).toEqual({ env: 'prod', team: 'data' });
    const res = await t.http.patch('/v1/volumes/vol_updb').set(as('dev')).send({ labels: { env: 'staging', empty: '' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...first.body, labels: { env: 'staging', empty: '' } });
    expect(await row('vol_updb')).toEqual({ name: 'logs', note: 'old note', labels: { env: 'staging', empty: '' }, delete_protection: false });
    const cleared = await t.http.patch('/v1/volumes/vol_updb').set(as('dev')).send({ labels: {} });
    expect(cleared.body).toEqual({ ...first.body, labels: {} });
    expect(await auditRows('vol_updb')).toEqual([
      expect.objectContaining({ actor_type: 'user', actor_id: session.dev.userId, data: { changes: { labels: { old: {}, new: { env: 'prod', team: 'data' } } } } }),
      expect.objectContaining({ data: { changes: { labels: { old: { env: 'prod', team: 'data' }, new: { env: 'staging', empty: '' } } } } }),
      expect.objectContaining({ data: { changes: { labels: { old: { env: 'staging', empty: '' }, new: {} } } } }),
    ]);
  });

  it('a "__proto__" label key (valid by the key rule) is kept like any other', async () => {
    const res = await t.http.patch('/v1/volumes/vol_updb').set(rw).set('Content-Type', 'application/json').send('{"labels": {"__proto__": "x", "a": "b"}}');
    expect(res.status).toBe(200);
    expect(res.text).toContain('"labels":{"a":"b","__proto__":"x"}');
    expect(await t.sql(`SELECT labels::text FROM volumes WHERE id = 'vol_updb'`)).toEqual([{ labels: '{"a": "b", "__proto__": "x"}' }]);
    expect((await t.http.get('/v1/volumes/vol_updb').set(rw)).text).toContain('"labels":{"a":"b","__proto__":"x"}');
    expect((await t.http.patch('/v1/volumes/vol_updb').set(rw).send({ labels: {} })).body.labels).toEqual({});
  });

  it('note: a string sets it, null clears it; members left out are unchanged', async () => {
    const set = await t.http.patch('/v1/volumes/vol_updb').set(rw).send({ note: 'nightly backups' });
    expect(set.status).toBe(200);
    expect(set.body.note).toBe('nightly backups');
    const cleared = await t.http.patch('/v1/volumes/vol_updb').set(rw).send({ note: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toEqual({ ...set.body, note: null });
    expect(await row('vol_updb')).toEqual({ name: 'logs', note: null, labels: {}, delete_protection: false });
  });

  it('the same PATCH again (a retry) answers the same volume and writes no second audit row; {} changes nothing', async () => {
    const count = async () => (await auditRows('vol_updb')).length;
    const first = await t.http.patch('/v1/volumes/vol_updb').set(rw).send({ name: 'logs-2' });
    const n = await count();
    const again = await t.http.patch('/v1/volumes/vol_updb').set(rw).set('Idempotency-Key', 'ignored-on-patch').send({ name: 'logs-2' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    const empty = await t.http.patch('/v1/volumes/vol_updb').set(rw).send({});
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual(first.body);
    expect(await count()).toBe(n);
    expect(await t.sql(`SELECT count(*)::int AS n FROM idempotency_records`)).toEqual([{ n: 0 }]);
  });

  describe('delete_protection', () => {
    it('a developer session may turn it on, not off (403, nothing written); an admin session turns it off', async () => {
      const on = await t.http.patch('/v1/volumes/vol_updb').set(as('dev')).send({ delete_protection: true });
      expect(on.status).toBe(200);
      expect(on.body.delete_protection).toBe(true);
      const audits = (await auditRows('vol_updb')).length;

      const off = await t.http.patch('/v1/volumes/vol_updb').set(as('dev')).send({ delete_protection: false, note: 'with it' });
      expect(off.status).toBe(403);
      expect(off.body).toEqual(errorBody(off, 'forbidden', 'Role developer may not turn delete_protection off; it needs one of: admin, owner'));
      expect(off.headers['x-ratelimit-limit']).toBe('600');
      expect(await row('vol_updb')).toEqual(expect.objectContaining({ note: null, delete_protection: true }));
      expect(await auditRows('vol_updb')).toHaveLength(audits);

      // Sending the value it already has is no change: allowed to a developer (a Terraform-style client sends its whole state).
      const same = await t.http.patch('/v1/volumes/vol_updb').set(as('dev')).send({ delete_protection: true, note: 'kept' });
      expect(same.status).toBe(200);

      const admin = await t.http.patch('/v1/volumes/vol_updb').set(as('admin')).send({ delete_protection: false });
      expect(admin.status).toBe(200);
      expect(admin.body).toEqual({ ...same.body, delete_protection: false });
      expect(await row('vol_updb')).toEqual(expect.objectContaining({ delete_protection: false }));
      expect((await auditRows('vol_updb')).at(-1)).toEqual(
        expect.objectContaining({ actor_type: 'user', actor_id: session.admin.userId, data: { changes: { delete_protection: { old: true, new: false } } } }),
      );
      // A developer with protection already off may send false.
      expect((await t.http.patch('/v1/volumes/vol_updb').set(as('dev')).send({ delete_protection: false })).status).toBe(200);
    });

    it('403 before 400 (lifecycle.md check order): a developer turning protection off a protected volume is 403 whatever else the body holds; otherwise the 400 comes first', async () => {
      await t.sql(`UPDATE volumes SET delete_protection = true WHERE id = 'vol_updb'`);
      const before = await row('vol_updb');
      const refusal = 'Role developer may not turn delete_protection off; it needs one of: admin, owner';
      for (const body of [{ delete_protection: false, name: '-bad' }, { delete_protection: false, name: 5 }, { delete_protection: false, labels: { 'Bad Key': 'x' } }, { delete_protection: false, note: 'x'.repeat(1001) }]) {
        const res = await t.http.patch('/v1/volumes/vol_updb').set(as('dev')).send(body);
        expect({ body, status: res.status, answer: res.body }).toEqual({ body, status: 403, answer: errorBody(res, 'forbidden', refusal) });
      }
      expect(await row('vol_updb')).toEqual(before);
      // Nothing to turn off (an unknown volume, another organization's, a deleted one): the 400.
      for (const id of ['vol_updnone', 'vol_updxdata1', 'vol_updc']) {
        const res = await t.http.patch(`/v1/volumes/${id}`).set(as('dev')).send({ delete_protection: false, name: '-bad' });
        expect({ id, status: res.status, field: res.body.error.details.field }).toEqual({ id, status: 400, field: 'name' });
      }
      // An admin turning it off with a bad member: the 400.
      const admin = await t.http.patch('/v1/volumes/vol_updb').set(as('admin')).send({ delete_protection: false, name: '-bad' });
      expect([admin.status, admin.body.error.details]).toEqual([400, { field: 'name' }]);
      await t.sql(`UPDATE volumes SET delete_protection = false WHERE id = 'vol_updb'`);
      const unprotected = await t.http.patch('/v1/volumes/vol_updb').set(as('dev')).send({ delete_protection: false, name: '-bad' });
      expect([unprotected.status, unprotected.body.error.details]).toEqual([400, { field: 'name' }]);
    });

    it('an owner session and an API key with vm:write turn it off', async () => {
      for (const [who, headers] of [['owner', as('owner')], ['key', rw]] as const) {
        await t.sql(`UPDATE volumes SET delete_protection = true WHERE id = 'vol_updb'`);
        const res = await t.http.patch('/v1/volumes/vol_updb').set(headers).send({ delete_protection: false });
        expect([who, res.status, res.body.delete_protection]).toEqual([who, 200, false]);
      }
    });
  });

  it('a name taken by another live volume of the organization is 409 conflict (nothing written); a deleted one\'s name and another organization\'s are free', async () => {
    const before = await row('vol_updb');
    const res = await t.http.patch('/v1/volumes/vol_updb').set(rw).send({ name: 'data-main', note: 'not written' });
    expect(res.status).toBe(409);
    expect(res.body).toEqual(
      errorBody(res, 'conflict', 'The organization already has a volume named data-main; names are unique among volumes not deleted', { field: 'name' }),
    );
    expect(await row('vol_updb')).toEqual(before);
    const reused = await t.http.patch('/v1/volumes/vol_updb').set(rw).send({ name: 'gone' });
    expect(reused.status).toBe(200);
    expect(reused.body.name).toBe('gone');
    const otherOrgsName = await t.http.patch('/v1/volumes/vol_updb').set(rw).send({ name: 'data-1' });
    expect(otherOrgsName.status).toBe(200);
    expect(await t.sql(`SELECT id, name FROM volumes WHERE name IN ('gone', 'data-1') ORDER BY id`)).toEqual([
      { id: 'vol_updb', name: 'data-1' },
      { id: 'vol_updc', name: 'gone' },
      { id: 'vol_updxdata1', name: 'data-1' },
    ]);
  });

  it('10 volumes renamed to one name at the same moment: exactly one gets it, nine 409 conflict (the unique index decides)', async () => {
    const ids = Array.from({ length: 10 }, (_, i) => `vol_updr${i}`);
    for (const id of ids) {
      await t.sql(
        `INSERT INTO volumes (id, org_id, name, status, type, region_id, zone_id, size_gb, term_months, billing_currency, billing_amount,
                              price_usd_minor, price_idr_minor, expires_at)
         VALUES ($1, 'org_upd', $1, 'available', 'premium', 'id-jkt', 'id-jkt-a', 10, 1, 'USD', 0, 0, 0, now())`,
        [id],
      );
    }
    const answers = await Promise.all(ids.map((id) => t.http.patch(`/v1/volumes/${id}`).set(rw).send({ name: 'contested' })));
    expect(answers.map((r) => r.status).sort()).toEqual([200, ...Array(9).fill(409)]);
    for (const r of answers.filter((a) => a.status === 409)) expect(r.body.error).toEqual(expect.objectContaining({ code: 'conflict', details: { field: 'name' } }));
    expect(await t.sql(`SELECT count(*)::int AS n FROM volumes WHERE name = 'contested'`)).toEqual([{ n: 1 }]);
    expect(await t.sql(`SELECT count(*)::int AS n FROM audit_log WHERE action = 'volume.update' AND target_id LIKE 'vol_updr%'`)).toEqual([{ n: 1 }]);
  });

  it('a deleted volume is 409 invalid_state; an unknown or another organization\'s is 404', async () => {
    const deleted = await t.http.patch('/v1/volumes/vol_updc').set(rw).send({ note: 'x' });
    expect(deleted.status).toBe(409);
    expect(deleted.body).toEqual(errorBody(deleted, 'invalid_state', 'Volume vol_updc is deleted and cannot be changed'));
    expect(await row('vol_updc')).toEqual({ name: 'gone', note: null, labels: {}, delete_protection: false });
    for (const id of ['vol_nope', 'vol_updxdata1']) {
      const res = await t.http.patch(`/v1/volumes/${id}`).set(rw).send({ note: 'x' });
      expect(res.status).toBe(404);
      expect(res.body).toEqual(errorBody(res, 'not_found', `Volume ${id} not found`));
    }
    expect(await row('vol_updxdata1')).toEqual({ name: 'data-1', note: null, labels: {}, delete_protection: false });
  });

  it('a viewer session and a read-only key are 403 before the body is read', async () => {
    const viewer = await t.http.patch('/v1/volumes/vol_upda').set(as('viewer')).send({ name: '' });
    expect(viewer.status).toBe(403);
    expect(viewer.body).toEqual(errorBody(viewer, 'forbidden', 'Role viewer may not do this; it needs one of: developer, admin, owner'));
    const key = await t.http.patch('/v1/volumes/vol_upda').set(ro).send({ name: 'x' });
    expect(key.status).toBe(403);
    expect(key.body).toEqual(errorBody(key, 'forbidden', 'The API key lacks the scope vm:write'));
  });

  const NAME_RULE = '1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit';
  const KEY_RULE = '1 to 63 of a-z, 0-9, ".", "_", "/", "-"';
  it.each([
    [{ name: '' }, 'name', `name must be ${NAME_RULE}`],
    [{ name: '-data' }, 'name', `name must be ${NAME_RULE}`],
    [{ name: 'with space' }, 'name', `name must be ${NAME_RULE}`],
    [{ name: 'x'.repeat(65) }, 'name', `name must be ${NAME_RULE}`],
    [{ name: 5 }, 'name', `name must be a string: ${NAME_RULE}`],
    [{ name: null }, 'name', `name must be a string: ${NAME_RULE}`],
    [{ name: 'nul\u0000' }, 'name', `name must be ${NAME_RULE}`],
    [{ note: 5 }, 'note', 'note must be a string or null'],
    [{ note: 'n'.repeat(1001) }, 'note', 'note must be at most 1000 characters'],
    [{ note: 'a\u0000b' }, 'note', 'note must not contain NUL (\\u0000) characters'],
    [{ labels: null }, 'labels', 'labels must be an object of string values'],
    [{ labels: ['a'] }, 'labels', 'labels must be an object of string values'],
    [{ labels: 'env=prod' }, 'labels', 'labels must be an object of string values'],
    [{ labels: { Env: 'x' } }, 'labels.Env', `labels: key "Env" must be ${KEY_RULE}`],
    [{ labels: { ['k'.repeat(64)]: 'x' } }, `labels.${'k'.repeat(64)}`, `labels: key "${'k'.repeat(64)}" must be ${KEY_RULE}`],
    [{ labels: { env: 5 } }, 'labels.env', 'labels.env must be a string'],
    [{ labels: { env: 'v'.repeat(256) } }, 'labels.env', 'labels.env must be at most 255 characters'],
    [{ labels: { env: 'a\u0000b' } }, 'labels.env', 'labels.env must not contain NUL (\\u0000) characters'],
    [{ labels: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, 'v'])) }, 'labels', 'labels may hold at most 32 labels, got 33'],
    [{ delete_protection: 'yes' }, 'delete_protection', 'delete_protection must be true or false'],
    [{ delete_protection: null }, 'delete_protection', 'delete_protection must be true or false'],
    [[{ name: 'x' }], 'body', 'Request body must be a JSON object'],
  ])('400 for %j naming %s, nothing written', async (body, field, message) => {
    const before = await row('vol_upda');
    const audits = (await auditRows('vol_upda')).length;
    const res = await t.http.patch('/v1/volumes/vol_upda').set(rw).send(body as object);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorBody(res, 'invalid_request', message, { field }));
    expect(await row('vol_upda')).toEqual(before);
    expect(await auditRows('vol_upda')).toHaveLength(audits);
  });

  it('a 400 comes before the 404 of an unknown volume', async () => {
    const res = await t.http.patch('/v1/volumes/vol_nope').set(rw).send({ name: '-bad' });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual({ field: 'name' });
  });
});
