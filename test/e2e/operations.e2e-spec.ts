import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { FixedClock } from '../../src/shared/kernel/clock/clock';
import { apiToken, bearer, organization, region } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';

const T0 = new Date('2026-11-22T10:00:00.000Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);

function org(suffix: string, n: number) {
  const base = organization(suffix);
  const volumes = Array.from({ length: n }, (_, i) => ({ ...base.volumes[0], id: `vol_${suffix}v${i + 1}`, name: `v${i + 1}` }));
  return {
    ...base,
    api_keys: [...base.api_keys, { name: 'ro', scopes: ['vm:read'], token: apiToken(suffix, 'ro') }],
    volumes,
  };
}

describe('GET /v1/operations and /v1/operations/{id}', () => {
  let t: TestApp;
  const clock = new FixedClock(T0);
  const ro = bearer(apiToken('ops', 'ro'));
  /** Operation ids, oldest first: v1 (succeeded), v2 (succeeded), v3 (failed), v1 again (pending). */
  const ids: string[] = [];

  const renew = async (volume: string) => {
    const res = await t.http.post(`/v1/volumes/${volume}/renew`).set(bearer(apiToken('ops', 'rw'))).send({ term_months: 1 });
    expect(res.status).toBe(202);
    ids.push(res.body.operation.id);
  };

  beforeAll(async () => {
    t = await startTestApp({}, clock);
    await t.seed({ regions: [region()], organizations: [org('ops', 3), org('opx', 1)] });
    clock.set(at(0));
    await renew('vol_opsv1');
    clock.set(at(1));
    await renew('vol_opsv2');
    clock.set(at(2));
    await renew('vol_opsv3');
    await t.sql(`UPDATE volumes SET status = 'deleted', deleted_at = now(), server_id = NULL, mount_path = NULL, mounted = false WHERE id = 'vol_opsv3'`);
    clock.set(at(3));
    await t.app.get(AdvanceOperations).runUntilIdle();
    clock.set(at(4));
    await renew('vol_opsv1');
    // Another organization's operation never shows.
    const other = await t.http.post('/v1/volumes/vol_opxv1/renew').set(bearer(apiToken('opx', 'rw'))).send({ term_months: 1 });
    expect(other.status).toBe(202);
    ids.push(other.body.operation.id);
  });
  afterAll(async () => t?.close());

  const succeeded = (id: string, volume: string, created: Date) => ({
    id,
    type: 'volume.renew',
    status: 'succeeded',
    vm_id: 'vm_opsweb1',
    volume_id: volume,
    steps: [{ name: 'renewing', status: 'succeeded' }],
    result: { volume_id: volume, term_months: 1, expires_at: '2027-01-21T00:00:00.000Z', charged: { currency: 'USD', amount: '2.00000' } },
    error: null,
    created_at: created.toISOString(),
    finished_at: at(3).toISOString(),
  });
  const expected = () => [
    {
      id: ids[3],
      type: 'volume.renew',
      status: 'pending',
      vm_id: 'vm_opsweb1',
      volume_id: 'vol_opsv1',
      steps: [{ name: 'renewing', status: 'running' }],
      result: null,
      error: null,
      created_at: at(4).toISOString(),
      finished_at: null,
    },
    {
      id: ids[2],
      type: 'volume.renew',
      status: 'failed',
      vm_id: 'vm_opsweb1',
      volume_id: 'vol_opsv3',
      steps: [{ name: 'renewing', status: 'failed' }],
      result: null,
      error: { code: 'invalid_state', message: 'Volume vol_opsv3 is deleted and cannot be renewed' },
      created_at: at(2).toISOString(),
      finished_at: at(3).toISOString(),
    },
    succeeded(ids[1], 'vol_opsv2', at(1)),
    succeeded(ids[0], 'vol_opsv1', at(0)),
  ];

  it('returns one operation to any reader of the organization', async () => {
    const res = await t.http.get(`/v1/operations/${ids[1]}`).set(ro);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(expected()[2]);
  });

  it('answers 404 for an unknown id and for another organization\'s operation', async () => {
    for (const id of ['op_unknown', ids[4]]) {
      const res = await t.http.get(`/v1/operations/${id}`).set(ro);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: { code: 'not_found', message: `Operation ${id} not found`, request_id: res.headers['x-request-id'], details: {} } });
    }
    expect((await t.http.get(`/v1/operations/${ids[0]}`)).status).toBe(401);
  });

  it('answers 400 naming id for an id holding a NUL character (no 500 from the database)', async () => {
    const res = await t.http.get('/v1/operations/op_%00').set(ro);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: { code: 'invalid_request', message: 'id must not contain NUL (\\u0000) characters', request_id: res.headers['x-request-id'], details: { field: 'id' } },
    });
  });

  it('lists the organization\'s operations newest first', async () => {
    const res = await t.http.get('/v1/operations').set(ro);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ operations: expected(), next_cursor: null });
  });

  it('pages with limit and an opaque cursor, without gaps or repeats', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 10; page++) {
      const res: { status: number; body: { operations: { id: string }[]; next_cursor: string | null } } = await t.http
        .get('/v1/operations')
        .query(cursor ? { limit: 3, cursor } : { limit: 3 })
        .set(ro);
      expect(res.status).toBe(200);
      seen.push(...res.body.operations.map((o) => o.id));
      cursor = res.body.next_cursor;
      if (!cursor) break;
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    }
    expect(seen).toEqual(expected().map((o) => o.id));

    const one = await t.http.get('/v1/operations?limit=1').set(ro);
    expect(one.body.operations).toEqual([expected()[0]]);
    const two = await t.http.get('/v1/operations').query({ limit: 1, cursor: one.body.next_cursor }).set(ro);
    expect(two.body.operations).toEqual([expected()[1]]);
  });

  it('filters by volume_id and status', async () => {
    const byVolume = await t.http.get('/v1/operations?volume_id=vol_opsv1').set(ro);
    expect(byVolume.body).toEqual({ operations: [expected()[0], expected()[3]], next_cursor: null });
    const byStatus = await t.http.get('/v1/operations?status=succeeded').set(ro);
    expect(byStatus.body).toEqual({ operations: [expected()[2], expected()[3]], next_cursor: null });
    const both = await t.http.get('/v1/operations?status=pending&volume_id=vol_opsv1').set(ro);
    expect(both.body).toEqual({ operations: [expected()[0]], next_cursor: null });
    const otherOrgs = await t.http.get('/v1/operations?volume_id=vol_opxv1').set(ro);
    expect(otherOrgs.body).toEqual({ operations: [], next_cursor: null });
    const paged = await t.http.get('/v1/operations?status=succeeded&limit=1').set(ro);
    const rest = await t.http.get('/v1/operations').query({ status: 'succeeded', limit: 1, cursor: paged.body.next_cursor }).set(ro);
    expect([...paged.body.operations, ...rest.body.operations]).toEqual([expected()[2], expected()[3]]);
    expect(rest.body.next_cursor).toBeNull();
  });

  const invalid: [string, string, string][] = [
    ['limit=0', 'limit', 'limit must be a whole number from 1 to 100'],
    ['limit=101', 'limit', 'limit must be a whole number from 1 to 100'],
    ['limit=abc', 'limit', 'limit must be a whole number from 1 to 100'],
    ['limit=-1', 'limit', 'limit must be a whole number from 1 to 100'],
    ['limit=1&limit=2', 'limit', 'limit must be a whole number from 1 to 100'],
    ['cursor=nonsense', 'cursor', 'cursor is not a valid cursor; pass the next_cursor of a previous page'],
    ['cursor=%21%21', 'cursor', 'cursor is not a valid cursor; pass the next_cursor of a previous page'],
    [`cursor=${Buffer.from('c1|2026-02-30T00:00:00.000000Z|op_x').toString('base64url')}`, 'cursor', 'cursor is not a valid cursor; pass the next_cursor of a previous page'],
    // Year 0 is a valid JavaScript date but no PostgreSQL timestamp: refused before it reaches SQL.
    [`cursor=${Buffer.from('c1|0000-01-01T00:00:00.000000Z|op_x').toString('base64url')}`, 'cursor', 'cursor is not a valid cursor; pass the next_cursor of a previous page'],
    ['status=done', 'status', 'status must be one of pending, running, succeeded, failed'],
    // PostgreSQL text cannot hold NUL: refused before it reaches SQL.
    ['volume_id=vol_%00', 'volume_id', 'volume_id must not contain NUL (\\u0000) characters'],
  ];
  it.each(invalid)('answers 400 for %s', async (query, field, message) => {
    const res = await t.http.get(`/v1/operations?${query}`).set(ro);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { code: 'invalid_request', message, request_id: res.headers['x-request-id'], details: { field } } });
  });
});
