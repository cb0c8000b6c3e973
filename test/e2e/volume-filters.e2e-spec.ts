import { apiToken, bearer, organization, region } from '../support/fixtures';
import { errorBody } from '../support/assertions';
import { TestApp, startTestApp } from '../support/test-app';

/** GET /v1/volumes filters (lifecycle.md): region, zone, type, status, server_id, name, label (repeatable), expires_before. */
describe('GET /v1/volumes filters', () => {
  let t: TestApp;
  const rw = bearer(apiToken('flt', 'rw'));


  beforeAll(async () => {
    t = await startTestApp();
    const base = organization('flt');
    const v = (id: string, over: Record<string, unknown>) => ({
      id, name: id.replace('vol_flt', ''), type: 'premium', region: 'id-jkt', zone: 'id-jkt-a', size_gb: 100, term_months: 1, currency: 'USD', ...over,
    });
    await t.seed({
      regions: [region('id-jkt'), region('sg-sin')],
      organizations: [
        {
          ...base,
          servers: [
            { id: 'vm_fltweb1', name: 'web-1', region: 'id-jkt', zone: 'id-jkt-a' },
            { id: 'vm_fltdb1', name: 'db-1', region: 'id-jkt', zone: 'id-jkt-b' },
          ],
          volumes: [
            v('vol_flta', { server: 'vm_fltweb1', mount_path: '/mnt/a', expires_at: '2026-12-21T00:00:00.000Z' }),
            v('vol_fltb', { type: 'ssd', size_gb: 40, expires_at: '2027-01-31T00:00:00.000Z' }),
            v('vol_fltc', { region: 'sg-sin', zone: 'sg-sin-a', expires_at: '2026-12-01T00:00:00.000Z' }),
            v('vol_fltd', { zone: 'id-jkt-b', server: 'vm_fltdb1', mount_path: '/mnt/d', expires_at: '2027-06-01T00:00:00.000Z' }),
            v('vol_flte', { expires_at: '2026-11-30T00:00:00.000Z' }),
          ],
        },
        organization('fltx'),
      ],
    });
    // Newest first: a, b, c, d, e.
    await t.sql(`
      UPDATE volumes SET created_at = '2026-11-01T00:00:00Z'::timestamptz + (ascii(right(id, 1)) - ascii('a')) * interval '-1 hour'
       WHERE org_id = 'org_flt'`);
    await t.sql(`UPDATE volumes SET labels = '{"env": "prod", "team": "data"}' WHERE id = 'vol_flta'`);
    await t.sql(`UPDATE volumes SET labels = '{"env": "prod", "tier": ""}' WHERE id = 'vol_fltb'`);
    await t.sql(`UPDATE volumes SET labels = '{"env": "staging", "team": "data"}' WHERE id = 'vol_fltc'`);
    await t.sql(`UPDATE volumes SET labels = '{"env": "prod"}', status = 'deleted', deleted_at = '2026-11-20T00:00:00Z' WHERE id = 'vol_flte'`);
    await t.sql(`UPDATE volumes SET labels = '{"env": "prod"}' WHERE org_id = 'org_fltx'`);
  });
  afterAll(async () => t?.close());

  const ids = async (query: Record<string, string | string[]>): Promise<string[]> => {
    const res = await t.http.get('/v1/volumes').query(query).set(rw);
    expect([res.status, res.body.next_cursor]).toEqual([200, null]);
    return res.body.volumes.map((x: { id: string }) => x.id);
  };

  it('without filters lists the volumes not deleted, newest first, with labels and delete_protection', async () => {
    expect(await ids({})).toEqual(['vol_flta', 'vol_fltb', 'vol_fltc', 'vol_fltd']);
    const res = await t.http.get('/v1/volumes').query({ name: 'b' }).set(rw);
    expect(res.body).toEqual({
      volumes: [
        {
          id: 'vol_fltb', name: 'b', status: 'available', type: 'ssd', region: 'id-jkt', zone: 'id-jkt-a', size_gb: 40,
          server: null, mount_path: null, mounted: false, term_months: 1, billing: { currency: 'USD', amount: '0.50000' },
          price_per_gb_month: { USD: '0.01250', IDR: '200' }, expires_at: '2027-01-31T00:00:00.000Z', note: null,
          labels: { env: 'prod', tier: '' }, delete_protection: false, created_at: '2026-10-31T23:00:00.000Z', deleted_at: null, deleted_reason: null, suspended_at: null, release_at: null, auto_renew: { enabled: false, term_months: null, last_attempt: null, next_attempt_at: null }, previous_server_id: null,
        },
      ],
      next_cursor: null,
    });
  });

  it('filters by region, zone, type, server_id, name and expires_before', async () => {
    expect(await ids({ region: 'id-jkt' })).toEqual(['vol_flta', 'vol_fltb', 'vol_fltd']);
    expect(await ids({ region: 'sg-sin' })).toEqual(['vol_fltc']);
    expect(await ids({ region: 'nowhere' })).toEqual([]);
    expect(await ids({ zone: 'id-jkt-b' })).toEqual(['vol_fltd']);
    expect(await ids({ type: 'ssd' })).toEqual(['vol_fltb']);
    expect(await ids({ type: 'premium' })).toEqual(['vol_flta', 'vol_fltc', 'vol_fltd']);
    expect(await ids({ server_id: 'vm_fltweb1' })).toEqual(['vol_flta']);
    expect(await ids({ server_id: 'vm_fltxweb1' })).toEqual([]);
    expect(await ids({ name: 'd' })).toEqual(['vol_fltd']);
    expect(await ids({ name: 'e' })).toEqual([]);
    expect(await ids({ expires_before: '2027-01-31T00:00:00Z' })).toEqual(['vol_flta', 'vol_fltc']);
    expect(await ids({ expires_before: '2027-01-31T00:00:00.001Z' })).toEqual(['vol_flta', 'vol_fltb', 'vol_fltc']);
    expect(await ids({ expires_before: '2027-01-31T08:00:00+07:00' })).toEqual(['vol_flta', 'vol_fltb', 'vol_fltc']);
    expect(await ids({ expires_before: '2026-12-02' })).toEqual(['vol_fltc']);
    expect(await ids({ region: 'id-jkt', type: 'premium', zone: 'id-jkt-a' })).toEqual(['vol_flta']);
  });

  it('filters by status; status=deleted lists the deleted ones only', async () => {
    expect(await ids({ status: 'attached' })).toEqual(['vol_flta', 'vol_fltd']);
    expect(await ids({ status: 'available' })).toEqual(['vol_fltb', 'vol_fltc']);
    expect(await ids({ status: 'creating' })).toEqual([]);
    expect(await ids({ status: 'deleted' })).toEqual(['vol_flte']);
    expect(await ids({ status: 'deleted', name: 'e', label: 'env=prod' })).toEqual(['vol_flte']);
  });

  it('label=key=value, repeatable: every pair must match; an empty value matches an empty label', async () => {
    expect(await ids({ label: 'env=prod' })).toEqual(['vol_flta', 'vol_fltb']);
    expect(await ids({ label: ['env=prod', 'team=data'] })).toEqual(['vol_flta']);
    expect(await ids({ label: 'team=data' })).toEqual(['vol_flta', 'vol_fltc']);
    expect(await ids({ label: 'tier=' })).toEqual(['vol_fltb']);
    expect(await ids({ label: ['env=prod', 'team=nope'] })).toEqual([]);
    expect(await ids({ label: 'env=prod', region: 'sg-sin' })).toEqual([]);
  });

  it('pages through a filtered listing; a cursor used with other filters continues after its position under them', async () => {
    const first = await t.http.get('/v1/volumes').query({ region: 'id-jkt', limit: 1 }).set(rw);
    expect(first.body.volumes.map((x: { id: string }) => x.id)).toEqual(['vol_flta']);
    const second = await t.http.get('/v1/volumes').query({ region: 'id-jkt', limit: 1, cursor: first.body.next_cursor }).set(rw);
    expect(second.body.volumes.map((x: { id: string }) => x.id)).toEqual(['vol_fltb']);
    const third = await t.http.get('/v1/volumes').query({ region: 'id-jkt', limit: 1, cursor: second.body.next_cursor }).set(rw);
    expect(third.body.volumes.map((x: { id: string }) => x.id)).toEqual(['vol_fltd']);
    expect(third.body.next_cursor).toBeNull();
    const switched = await t.http.get('/v1/volumes').query({ type: 'premium', cursor: first.body.next_cursor }).set(rw);
    expect(switched.body).toEqual({ volumes: [expect.objectContaining({ id: 'vol_fltc' }), expect.objectContaining({ id: 'vol_fltd' })], next_cursor: null });
  });

  it.each([
    [{ type: 'hdd' }, 'type', 'type must be premium or ssd'],
    [{ status: 'gone' }, 'status', 'status must be one of creating, available, attached, suspended, deleting, deleted'],
    [{ status: ['attached', 'available'] }, 'status', 'status must be given once, as a string'],
    [{ region: '' }, 'region', 'region must not be empty'],
    [{ region: ['id-jkt', 'sg-sin'] }, 'region', 'region must be given once, as a string'],
    [{ zone: '' }, 'zone', 'zone must not be empty'],
    [{ server_id: '' }, 'server_id', 'server_id must not be empty'],
    [{ name: '-x' }, 'name', 'name must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit'],
    [{ label: 'env' }, 'label', 'label must be key=value, got "env"'],
    [{ label: ['env=prod', 'Env=x'] }, 'label', 'label: key "Env" must be 1 to 63 of a-z, 0-9, ".", "_", "/", "-"'],
    [{ label: '=x' }, 'label', 'label: key "" must be 1 to 63 of a-z, 0-9, ".", "_", "/", "-"'],
    [{ expires_before: 'tomorrow' }, 'expires_before', 'expires_before must be an ISO 8601 date-time with a time zone, such as 2026-12-31T00:00:00Z, or a date'],
    [{ expires_before: '2026-02-30' }, 'expires_before', 'expires_before must be an ISO 8601 date-time with a time zone, such as 2026-12-31T00:00:00Z, or a date'],
    [{ expires_before: '2026-12-01T00:00:00' }, 'expires_before', 'expires_before must be an ISO 8601 date-time with a time zone, such as 2026-12-31T00:00:00Z, or a date'],
    [{ expires_before: '2026-12-01T25:00:00Z' }, 'expires_before', 'expires_before must be an ISO 8601 date-time with a time zone, such as 2026-12-31T00:00:00Z, or a date'],
    [{ expires_before: ['2026-12-01', '2026-12-02'] }, 'expires_before', 'expires_before must be given once, as a string'],
    [{ region: 'id\u0000jkt' }, 'region', 'region must not contain NUL (\\u0000) characters'],
  ])('400 for %j naming %s', async (query, field, message) => {
    const res = await t.http.get('/v1/volumes').query(query).set(rw);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorBody(res, 'invalid_request', message, { field }));
    expect(res.headers['x-ratelimit-limit']).toBe('600');
  });
});
