import { TestApp, startTestApp } from '../support/test-app';
import { OWNER_PASSWORD, apiToken, bearer, organization, region } from '../support/fixtures';

describe('GET /v1/regions', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
    await t.seed({
      regions: [
        // seeded out of id order, zones too: the answer is ordered by id
        region('sg-sin', {
          name: 'Singapore',
          zones: [
            { id: 'sg-sin-b', available: true },
            { id: 'sg-sin-a', available: false },
          ],
        }),
        region('id-jkt'),
        { id: 'au-syd', name: 'Sydney', capacity_gb: 0, zones: [], volume_offers: [] },
      ],
      organizations: [
        organization('reg', {
          members: [{ email: 'viewer@reg.test', password: OWNER_PASSWORD, role: 'viewer' }],
          api_keys: [
            { name: 'read', scopes: ['vm:read'], token: apiToken('reg', 'ro') },
            { name: 'write', scopes: ['vm:write'], token: apiToken('reg', 'wo') },
          ],
        }),
      ],
    });
  });
  afterAll(async () => t?.close());

  const expected = {
    regions: [
      { id: 'au-syd', name: 'Sydney', zones: [] },
      {
        id: 'id-jkt',
        name: 'Jakarta',
        zones: [
          { id: 'id-jkt-a', available: true },
          { id: 'id-jkt-b', available: false },
        ],
      },
      {
        id: 'sg-sin',
        name: 'Singapore',
        zones: [
          { id: 'sg-sin-a', available: false },
          { id: 'sg-sin-b', available: true },
        ],
      },
    ],
  };

  it('lists every region with its zones, ordered by id, to an API key with vm:read', async () => {
    const res = await t.http.get('/v1/regions').set(bearer(apiToken('reg', 'ro')));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual(expected);
    expect(Object.keys(res.body.regions[1])).toEqual(['id', 'name', 'zones']);
    expect(Object.keys(res.body.regions[1].zones[0])).toEqual(['id', 'available']);
  });

  it('shows a zone change made by the operator on the next request', async () => {
    await t.sql("UPDATE zones SET available = true WHERE id = 'id-jkt-b'");
    try {
      const res = await t.http.get('/v1/regions').set(bearer(apiToken('reg', 'ro')));
      expect(res.body.regions[1].zones).toEqual([
        { id: 'id-jkt-a', available: true },
        { id: 'id-jkt-b', available: true },
      ]);
    } finally {
      await t.sql("UPDATE zones SET available = false WHERE id = 'id-jkt-b'");
    }
  });

  it('answers any member of the organization (a viewer session)', async () => {
    const login = await t.http.post('/v1/auth/login').send({ email: 'viewer@reg.test', password: OWNER_PASSWORD });
    expect(login.status).toBe(200);
    const res = await t.http.get('/v1/regions').set(bearer(login.body.token));
    expect(res.status).toBe(200);
    expect(res.body).toEqual(expected);
  });

  it('answers 401 without a token and 403 to an API key without vm:read', async () => {
    const none = await t.http.get('/v1/regions');
    expect(none.status).toBe(401);
    expect(none.body).toEqual({
      error: {
        code: 'unauthorized',
        message: 'Missing Authorization header; send "Authorization: Bearer <token>"',
        request_id: none.headers['x-request-id'],
        details: {},
      },
    });

    const writeOnly = await t.http.get('/v1/regions').set(bearer(apiToken('reg', 'wo')));
    expect(writeOnly.status).toBe(403);
    expect(writeOnly.body).toEqual({
      error: { code: 'forbidden', message: 'The API key lacks the scope vm:read', request_id: writeOnly.headers['x-request-id'], details: {} },
    });
  });
});
