import { FixedClock } from '../../src/shared/kernel/clock/clock';
import { errorBody } from '../support/assertions';
import { OWNER_PASSWORD, apiToken, bearer, organization, region } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';
import { setProviderDown } from '../support/provider';

const NOW = '2026-11-23T10:00:00.000Z';

/**
 * POST /v1/volumes/{id}/attach, POST /v1/volumes/{id}/detach, DELETE /v1/volumes/{id}
 * (lifecycle.md "Attach, detach, delete"): 202 {volume, operation} + Location, the operation and
 * audit rows, the volume `deleting` at once, every 4xx with its envelope, the operation in the
 * way named, Idempotency-Key replays, 503 while the provider is down.
 */
describe('attach, detach, delete', () => {
  let t: TestApp;
  const clock = new FixedClock(new Date(NOW));
  const rw = bearer(apiToken('ac', 'rw'));
  const ro = bearer(apiToken('ac', 'ro'));
  const other = bearer(apiToken('ax', 'rw'));
  let viewer: { Authorization: string };

  const detached = (id: string, name: string, extra: Record<string, unknown> = {}) => ({
    id, name, type: 'premium', region: 'id-jkt', zone: 'id-jkt-a', size_gb: 100, term_months: 1, currency: 'USD',
    expires_at: '2026-12-21T00:00:00.000Z', ...extra,
  });

  beforeAll(async () => {
    t = await startTestApp({}, clock);
    const base = organization('ac');
    await t.seed({
      regions: [
        {
          ...region('id-jkt'),
          volume_offers: [
            { type: 'premium', min_gb: 10, max_gb: 4000, step_gb: 10, terms: [1, 3, 12], per_server_limit: 2, price_per_gb_month: { USD: '0.02000', IDR: '320' } },
          ],
        },
      ],
      organizations: [
        {
          ...base,
          members: [
            { email: 'owner@ac.test', password: OWNER_PASSWORD, role: 'owner' },
            { email: 'viewer@ac.test', password: OWNER_PASSWORD, role: 'viewer' },
          ],
          api_keys: [...base.api_keys, { name: 'ro', scopes: ['vm:read'], token: apiToken('ac', 'ro') }],
          servers: [
            ...base.servers,
            { id: 'vm_acweb2', name: 'web-2', region: 'id-jkt', zone: 'id-jkt-a' },
            { id: 'vm_acb1', name: 'b-1', region: 'id-jkt', zone: 'id-jkt-b' },
          ],
          volumes: [
            ...base.volumes,
            detached('vol_acfree1', 'free-1'),
            detached('vol_acfree2', 'free-2'),
            detached('vol_acfree3', 'free-3'),
            detached('vol_acprot1', 'prot-1'),
            { ...detached('vol_acweb2a', 'web2-a'), server: 'vm_acweb2', mount_path: '/mnt/a' },
          ],
        },
        organization('ax'),
      ],
    });
    await t.sql(`UPDATE volumes SET delete_protection = true WHERE id = 'vol_acprot1'`);
    viewer = bearer((await t.http.post('/v1/auth/login').send({ email: 'viewer@ac.test', password: OWNER_PASSWORD })).body.token);
  });
  afterAll(async () => t?.close());

  const attach = (id: string, body: object, headers = rw) => t.http.post(`/v1/volumes/${id}/attach`).set(headers).send(body);
  const detach = (id: string, headers = rw) => t.http.post(`/v1/volumes/${id}/detach`).set(headers);
  const remove = (id: string, query = '', headers = rw) => t.http.delete(`/v1/volumes/${id}${query}`).set(headers);
  const opsOf = (volumeId: string) =>
    t.sql(`SELECT type, status, vm_id, steps, params FROM operations WHERE volume_id = $1 ORDER BY created_at, id`, [volumeId]);
  const auditOf = (volumeId: string) =>
    t.sql(`SELECT action, actor_type, data FROM audit_log WHERE target_id = $1 ORDER BY seq`, [volumeId]);
  const finish = (opId: string) =>
    t.sql(`UPDATE operations SET status = 'succeeded', finished_at = now(), result = '{}'::jsonb WHERE id = $1`, [opId]);
  const volumeRow = async (id: string) =>
    (await t.sql(`SELECT status, server_id, mount_path, mounted, deleted_at FROM volumes WHERE id = $1`, [id]))[0];

  const operationBody = (type: string, volumeId: string, vmId: string | null, steps: string[]) => ({
    id: expect.stringMatching(/^op_/),
    type,
    status: 'pending',
    vm_id: vmId,
    volume_id: volumeId,
    steps: steps.map((name) => ({ name, status: 'pending' })),
    result: null,
    error: null,
    created_at: NOW,
    finished_at: null,
  });

  describe('attach', () => {
    it('202: the volume stays available; operation volume.attach (attaching, mounting) with the server; default mount path; audit', async () => {
      const before = (await t.http.get('/v1/volumes/vol_acfree1').set(rw)).body;
      const res = await attach('vol_acfree1', { server_id: 'vm_acweb1' });
      expect(res.status).toBe(202);
      expect(res.headers.location).toBe(`/v1/operations/${res.body.operation.id}`);
      expect(res.body).toEqual({ volume: before, operation: operationBody('volume.attach', 'vol_acfree1', 'vm_acweb1', ['attaching', 'mounting']) });
      expect(before.status).toBe('available');
      expect(await opsOf('vol_acfree1')).toEqual([
        {
          type: 'volume.attach', status: 'pending', vm_id: 'vm_acweb1',
          steps: [{ name: 'attaching', status: 'pending' }, { name: 'mounting', status: 'pending' }],
          params: { server_id: 'vm_acweb1', mount_path: '/mnt/free-1' },
        },
      ]);
      expect(await auditOf('vol_acfree1')).toEqual([
        { action: 'volume.attach', actor_type: 'api_key', data: { operation_id: res.body.operation.id, server_id: 'vm_acweb1', mount_path: '/mnt/free-1' } },
      ]);
      // web-1 now holds 1 disk + 1 on its way = its limit of 2: the options no longer offer it (web-2 holds 1).
      const options = (await t.http.get('/v1/volume-options?region=id-jkt').set(rw)).body;
      expect(options.zones[0].servers).toEqual([{ id: 'vm_acweb2', name: 'web-2' }]);

      // A second action on the volume: 409 naming the operation in the way.
      const busy = await attach('vol_acfree1', { server_id: 'vm_acweb2' });
      expect(busy.status).toBe(409);
      expect(busy.body).toEqual(
        errorBody(busy, 'invalid_state', `Volume vol_acfree1 already has an operation pending or running (${res.body.operation.id}); wait for it to end`, {
          operation_id: res.body.operation.id,
        }),
      );
      // Detach and delete too: the operation in the way is named before the volume's status is judged.
      for (const other of [await remove('vol_acfree1'), await detach('vol_acfree1')]) {
        expect(other.status).toBe(409);
        expect(other.body.error.details).toEqual({ operation_id: res.body.operation.id });
      }
    });

    it('409 quota_exceeded when the server has no free slot (disks + attaches in flight); a given mount path is kept', async () => {
      // vm_acweb1 holds vol_acdata1 and vol_acfree1 is on its way: full.
      const full = await attach('vol_acfree2', { server_id: 'vm_acweb1' });
      expect(full.status).toBe(409);
      expect(full.body).toEqual(
        errorBody(full, 'quota_exceeded', 'Server vm_acweb1 already holds 2 data disks (the limit), counting attaches and purchases still in progress', {
          limit: 2,
          server_id: 'vm_acweb1',
        }),
      );
      expect(await opsOf('vol_acfree2')).toEqual([]);
      const res = await attach('vol_acfree2', { server_id: 'vm_acweb2', mount_path: '/data/two' });
      expect(res.status).toBe(202);
      expect((await opsOf('vol_acfree2'))[0]).toEqual(expect.objectContaining({ params: { server_id: 'vm_acweb2', mount_path: '/data/two' } }));
    });

    it.each([
      [{}, 'server_id', 'server_id is required'],
      [{ server_id: 5 }, 'server_id', 'server_id must be a string'],
      [{ server_id: 'vm_acweb2', mount_path: 'rel/path' }, 'mount_path', 'mount_path must be an absolute path: "/" followed by at most 254 characters, no NUL, no "." or ".." segment; got "rel/path"'],
      [{ server_id: 'vm_acweb2', mount_path: '/mnt/../etc' }, 'mount_path', 'mount_path must be an absolute path: "/" followed by at most 254 characters, no NUL, no "." or ".." segment; got "/mnt/../etc"'],
      [{ server_id: 'vm_acb1' }, 'server_id', 'server vm_acb1 is in zone id-jkt-b; volume vol_acfree3 is in id-jkt-a'],
    ])('400 for %j naming %s', async (body, field, message) => {
      const res = await attach('vol_acfree3', body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(errorBody(res, 'invalid_request', message, { field }));
      expect(await opsOf('vol_acfree3')).toEqual([]);
    });

    it('404 for an unknown volume, another organization\'s, an unknown or foreign server; 409 unless available; 403', async () => {
      for (const [id, server, message] of [
        ['vol_nope', 'vm_acweb2', 'Volume vol_nope not found'],
        ['vol_axdata1', 'vm_acweb2', 'Volume vol_axdata1 not found'],
        ['vol_acfree3', 'vm_nope', 'Server vm_nope not found'],
        ['vol_acfree3', 'vm_axweb1', 'Server vm_axweb1 not found'],
      ]) {
        const res = await attach(id, { server_id: server });
        expect(res.status).toBe(404);
        expect(res.body).toEqual(errorBody(res, 'not_found', message));
      }
      const attached = await attach('vol_acdata1', { server_id: 'vm_acweb2' });
      expect(attached.status).toBe(409);
      expect(attached.body).toEqual(errorBody(attached, 'invalid_state', 'Volume vol_acdata1 is attached; only an available (detached) volume can be attached'));
      const key = await attach('vol_acfree3', { server_id: 'vm_acweb2' }, ro);
      expect(key.status).toBe(403);
      const session = await attach('vol_acfree3', { server_id: 'vm_acweb2' }, viewer);
      expect(session.status).toBe(403);
      expect(session.body).toEqual(errorBody(session, 'forbidden', 'Role viewer may not do this; it needs one of: developer, admin, owner'));
      expect(await opsOf('vol_acfree3')).toEqual([]);
    });
  });

  describe('detach', () => {
    it('202: the volume stays attached; operation volume.detach (unmounting, detaching); 409 unless attached', async () => {
      const before = (await t.http.get('/v1/volumes/vol_acweb2a').set(rw)).body;
      const res = await detach('vol_acweb2a');
      expect(res.status).toBe(202);
      expect(res.headers.location).toBe(`/v1/operations/${res.body.operation.id}`);
      expect(res.body).toEqual({ volume: before, operation: operationBody('volume.detach', 'vol_acweb2a', 'vm_acweb2', ['unmounting', 'detaching']) });
      expect(before).toEqual(expect.objectContaining({ status: 'attached', server: { id: 'vm_acweb2', name: 'web-2' }, mount_path: '/mnt/a', mounted: true }));
      expect(await auditOf('vol_acweb2a')).toEqual([
        { action: 'volume.detach', actor_type: 'api_key', data: { operation_id: res.body.operation.id, server_id: 'vm_acweb2', mount_path: '/mnt/a' } },
      ]);
      const notAttached = await detach('vol_acfree3');
      expect(notAttached.status).toBe(409);
      expect(notAttached.body).toEqual(errorBody(notAttached, 'invalid_state', 'Volume vol_acfree3 is available; only an attached volume can be detached'));
      const missing = await detach('vol_nope');
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual(errorBody(missing, 'not_found', 'Volume vol_nope not found'));
      await finish(res.body.operation.id);
    });
  });

  describe('delete', () => {
    it('409 for an attached volume without ?detach=true, a protected one; 400 for a bad detach; nothing changes', async () => {
      const attached = await remove('vol_acdata1');
      expect(attached.status).toBe(409);
      expect(attached.body).toEqual(
        errorBody(attached, 'invalid_state', 'Volume vol_acdata1 is attached to server vm_acweb1; detach it first or delete with ?detach=true'),
      );
      const prot = await remove('vol_acprot1');
      expect(prot.status).toBe(409);
      expect(prot.body).toEqual(errorBody(prot, 'invalid_state', 'Volume vol_acprot1 has delete_protection on; turn it off (PATCH) before deleting it'));
      const bad = await remove('vol_acfree3', '?detach=yes');
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual(errorBody(bad, 'invalid_request', 'detach must be true or false', { field: 'detach' }));
      const foreign = await remove('vol_axdata1', '', rw);
      expect(foreign.status).toBe(404);
      expect(await volumeRow('vol_acdata1')).toEqual({ status: 'attached', server_id: 'vm_acweb1', mount_path: '/mnt/data', mounted: true, deleted_at: null });
      expect(await opsOf('vol_acprot1')).toEqual([]);
    });

    it('202 for a detached volume: deleting at once, steps [deleting]; again is 409; the capacity stays counted until it is deleted', async () => {
      const used = await t.sql(`SELECT used_gb::text FROM region_usage WHERE id = 'id-jkt'`);
      const res = await remove('vol_acfree3');
      expect(res.status).toBe(202);
      expect(res.headers.location).toBe(`/v1/operations/${res.body.operation.id}`);
      expect(res.body.operation).toEqual(operationBody('volume.delete', 'vol_acfree3', null, ['deleting']));
      expect(res.body.volume).toEqual(expect.objectContaining({ id: 'vol_acfree3', status: 'deleting', deleted_at: null, server: null }));
      expect(await volumeRow('vol_acfree3')).toEqual({ status: 'deleting', server_id: null, mount_path: null, mounted: false, deleted_at: null });
      expect((await opsOf('vol_acfree3'))[0]).toEqual(expect.objectContaining({ params: { detach: false } }));
      expect(await auditOf('vol_acfree3')).toEqual([
        { action: 'volume.delete', actor_type: 'api_key', data: { operation_id: res.body.operation.id, detach: false, server_id: null, size_gb: 100 } },
      ]);
      expect(await t.sql(`SELECT used_gb::text FROM region_usage WHERE id = 'id-jkt'`)).toEqual(used);
      await finish(res.body.operation.id);
      const again = await remove('vol_acfree3');
      expect(again.status).toBe(409);
      expect(again.body).toEqual(errorBody(again, 'invalid_state', 'Volume vol_acfree3 is already being deleted'));
    });

    it('202 with ?detach=true for an attached volume: deleting at once, still on its server; steps unmounting, detaching, deleting', async () => {
      const res = await remove('vol_acdata1', '?detach=true', bearer((await t.http.post('/v1/auth/login').send({ email: 'owner@ac.test', password: OWNER_PASSWORD })).body.token));
      expect(res.status).toBe(202);
      expect(res.body.operation).toEqual(operationBody('volume.delete', 'vol_acdata1', 'vm_acweb1', ['unmounting', 'detaching', 'deleting']));
      expect(res.body.volume).toEqual(
        expect.objectContaining({ status: 'deleting', server: { id: 'vm_acweb1', name: 'web-1' }, mount_path: '/mnt/data', mounted: true }),
      );
      expect(await volumeRow('vol_acdata1')).toEqual({ status: 'deleting', server_id: 'vm_acweb1', mount_path: '/mnt/data', mounted: true, deleted_at: null });
      expect((await opsOf('vol_acdata1'))[0]).toEqual(expect.objectContaining({ params: { detach: true } }));
      expect((await auditOf('vol_acdata1'))[0]).toEqual(expect.objectContaining({ action: 'volume.delete', actor_type: 'user' }));
    });
  });

  it('Idempotency-Key: a delete replays its 202 to the byte; a stored 409 replays too; the key on another route is 409 idempotency_conflict', async () => {
    await t.sql(`UPDATE operations SET status = 'succeeded', finished_at = now(), result = '{}'::jsonb WHERE volume_id = 'vol_acfree2' AND status = 'pending'`);
    await t.sql(`UPDATE volumes SET status = 'attached', server_id = 'vm_acweb2', mount_path = '/data/two', mounted = true WHERE id = 'vol_acfree2'`);
    const first = await remove('vol_acfree2', '?detach=true').set('Idempotency-Key', 'del-1');
    expect(first.status).toBe(202);
    const again = await remove('vol_acfree2', '?detach=true').set('Idempotency-Key', 'del-1');
    expect(again.status).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe(first.text);
    expect(await opsOf('vol_acfree2')).toHaveLength(2);
    const otherRoute = await detach('vol_acfree2').set('Idempotency-Key', 'del-1');
    expect(otherRoute.status).toBe(409);
    expect(otherRoute.body.error.code).toBe('idempotency_conflict');

    const refused = await remove('vol_acprot1').set('Idempotency-Key', 'del-2');
    expect(refused.status).toBe(409);
    await t.sql(`UPDATE volumes SET delete_protection = false WHERE id = 'vol_acprot1'`);
    const replay = await remove('vol_acprot1').set('Idempotency-Key', 'del-2');
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.text).toBe(refused.text);
  });

  it('503 provider_unavailable while the provider is down, for attach, detach and delete: nothing written', async () => {
    const opCount = async () => (await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM operations`))[0].n;
    const n = await opCount();
    await t.sql(`UPDATE volume_offers SET per_server_limit = 8`);
    await setProviderDown(t, true);
    try {
      for (const res of [await attach('vol_acprot1', { server_id: 'vm_acweb2' }), await remove('vol_acprot1'), await detach('vol_acweb2a')]) {
        expect(res.status).toBe(503);
        expect(res.body).toEqual(errorBody(res, 'provider_unavailable', 'The storage provider is unavailable; nothing was reserved. Retry later'));
      }
      // A 409 comes before the 503.
      expect((await detach('vol_acprot1')).status).toBe(409);
    } finally {
      await setProviderDown(t, false);
    }
    expect(await opCount()).toBe(n);
    expect(await volumeRow('vol_acprot1')).toEqual({ status: 'available', server_id: null, mount_path: null, mounted: false, deleted_at: null });
    void other;
  });
});
