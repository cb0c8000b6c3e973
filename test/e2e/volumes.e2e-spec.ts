import { apiToken, bearer, organization, region } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';

describe('GET /v1/volumes and /v1/volumes/{id}', () => {
  let t: TestApp;
  const ro = bearer(apiToken('vols', 'ro'));
  let createdAt: string;
  let createdLater: string;

  beforeAll(async () => {
    t = await startTestApp();
    const base = organization('vols');
    const volume = base.volumes[0];
    await t.seed({
      regions: [region()],
      organizations: [
        {
          ...base,
          api_keys: [...base.api_keys, { name: 'ro', scopes: ['vm:read'], token: apiToken('vols', 'ro') }],
          volumes: [
            { ...volume, id: 'vol_volsa', name: 'attached-one' },
            {
              ...volume, id: 'vol_volsb', name: 'detached-ssd', type: 'ssd', size_gb: 40, term_months: 12, currency: 'IDR',
              server: undefined, mount_path: undefined, note: 'backups',
            },
            { ...volume, id: 'vol_volsc', name: 'to-delete', server: undefined, mount_path: undefined },
            { ...volume, id: 'vol_volsd', name: 'fourth', server: undefined, mount_path: undefined },
          ],
        },
        organization('volx'),
      ],
    });
    await t.sql(`UPDATE volumes SET status = 'deleted', deleted_at = '2026-11-20T08:00:00Z' WHERE id = 'vol_volsc'`);
    // One seed transaction gives every volume the same created_at (the id breaks the tie); the
    // attached one is made the newest.
    await t.sql(`UPDATE volumes SET created_at = created_at + interval '1.5 second' WHERE id = 'vol_volsa'`);
    const [row] = await t.sql<{ created_at: Date }>(`SELECT created_at FROM volumes WHERE id = 'vol_volsb'`);
    createdAt = row.created_at.toISOString();
    const [later] = await t.sql<{ created_at: Date }>(`SELECT created_at FROM volumes WHERE id = 'vol_volsa'`);
    createdLater = later.created_at.toISOString();
  });
  afterAll(async () => t?.close());

  const attached = () => ({
    id: 'vol_volsa',
    name: 'attached-one',
    status: 'attached',
    type: 'premium',
    region: 'id-jkt',
    zone: 'id-jkt-a',
    size_gb: 100,
    server: { id: 'vm_volsweb1', name: 'web-1' },
    mount_path: '/mnt/data',
    mounted: true,
    term_months: 1,
    billing: { currency: 'USD', amount: '2.00000' },
    price_per_gb_month: { USD: '0.02000', IDR: '320' },
    expires_at: '2026-12-21T00:00:00.000Z',
    note: null,
    labels: {},
    delete_protection: false,
    created_at: createdLater,
    deleted_at: null,
    deleted_reason: null, suspended_at: null, release_at: null, auto_renew: { enabled: false, term_months: null, last_attempt: null, next_attempt_at: null }, previous_server_id: null,
  });
  const detached = () => ({
    id: 'vol_volsb',
    name: 'detached-ssd',
    status: 'available',
    type: 'ssd',
    region: 'id-jkt',
    zone: 'id-jkt-a',
    size_gb: 40,
    server: null,
    mount_path: null,
    mounted: false,
    term_months: 12,
    billing: { currency: 'IDR', amount: '96000' },
    price_per_gb_month: { USD: '0.01250', IDR: '200' },
    expires_at: '2026-12-21T00:00:00.000Z',
    note: 'backups',
    labels: {},
    delete_protection: false,
    created_at: createdAt,
    deleted_at: null,
    deleted_reason: null, suspended_at: null, release_at: null, auto_renew: { enabled: false, term_months: null, last_attempt: null, next_attempt_at: null }, previous_server_id: null,
  });
  const fourth = () => ({
    ...attached(),
    id: 'vol_volsd',
    name: 'fourth',
    status: 'available',
    server: null,
    mount_path: null,
    mounted: false,
    created_at: createdAt,
  });

  it('returns one volume, unwrapped, with every field (nulls for a detached disk)', async () => {
    const a = await t.http.get('/v1/volumes/vol_volsa').set(ro);
    expect(a.status).toBe(200);
    expect(a.body).toEqual(attached());
    const b = await t.http.get('/v1/volumes/vol_volsb').set(ro);
    expect(b.body).toEqual(detached());
  });

  it('returns a deleted volume by id, with deleted_at', async () => {
    const res = await t.http.get('/v1/volumes/vol_volsc').set(ro);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ...fourth(),
      id: 'vol_volsc',
      name: 'to-delete',
      status: 'deleted',
      deleted_at: '2026-11-20T08:00:00.000Z',
      deleted_reason: 'customer',
    });
  });

  it('answers 404 for an unknown volume and another organization\'s', async () => {
    for (const id of ['vol_nope', 'vol_volxdata1']) {
      const res = await t.http.get(`/v1/volumes/${id}`).set(ro);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: { code: 'not_found', message: `Volume ${id} not found`, request_id: res.headers['x-request-id'], details: {} } });
    }
  });

  it('lists the volumes that are not deleted, newest first, only the organization\'s', async () => {
    const res = await t.http.get('/v1/volumes').set(ro);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ volumes: [attached(), fourth(), detached()], next_cursor: null });
    const other = await t.http.get('/v1/volumes').set(bearer(apiToken('volx', 'rw')));
    expect(other.body.volumes.map((v: { id: string }) => v.id)).toEqual(['vol_volxdata1']);
  });

  it('pages with limit and cursor', async () => {
    const first = await t.http.get('/v1/volumes?limit=1').set(ro);
    expect(first.body.volumes).toEqual([attached()]);
    expect(first.body.next_cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    const second = await t.http.get('/v1/volumes').query({ limit: 1, cursor: first.body.next_cursor }).set(ro);
    expect(second.body.volumes).toEqual([fourth()]);
    const third = await t.http.get('/v1/volumes').query({ limit: 2, cursor: second.body.next_cursor }).set(ro);
    expect(third.body).toEqual({ volumes: [detached()], next_cursor: null });
  });

  it('answers 400 naming id for an id holding a NUL character (no 500 from the database)', async () => {
    const res = await t.http.get('/v1/volumes/vol_%00').set(ro);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: { code: 'invalid_request', message: 'id must not contain NUL (\\u0000) characters', request_id: res.headers['x-request-id'], details: { field: 'id' } },
    });
  });

  it('answers 400 for a bad limit or cursor, 401 without a token', async () => {
    const limit = await t.http.get('/v1/volumes?limit=0').set(ro);
    expect(limit.status).toBe(400);
    expect(limit.body).toEqual({
      error: { code: 'invalid_request', message: 'limit must be a whole number from 1 to 100', request_id: limit.headers['x-request-id'], details: { field: 'limit' } },
    });
    const year0 = Buffer.from('c1|0000-01-01T00:00:00.000000Z|vol_x').toString('base64url');
    for (const bad of ['abc', year0]) {
      const cursor = await t.http.get(`/v1/volumes?cursor=${bad}`).set(ro);
      expect(cursor.status).toBe(400);
      expect(cursor.body).toEqual({
        error: {
          code: 'invalid_request',
          message: 'cursor is not a valid cursor; pass the next_cursor of a previous page',
          request_id: cursor.headers['x-request-id'],
          details: { field: 'cursor' },
        },
      });
    }
    expect((await t.http.get('/v1/volumes')).status).toBe(401);
  });
});
