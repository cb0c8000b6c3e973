import { runCommand } from '../../src/cli/commands';
import { SetRegionCapacity, SetZoneAvailability } from '../../src/modules/options/application/catalog-admin.use-cases';
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
          // sells ssd disks only
          volume_offers: [region().volume_offers[1]],
        }),
        // offers seeded out of order too
        region('id-jkt', {
          volume_offers: [...region().volume_offers].reverse(), snapshot_price_per_gb_month: { USD: '0.01000', IDR: '160' },
          reserved_ipv4_price_per_month: { USD: '1.00000', IDR: '16000' }, reserved_ipv4_pool: ['203.0.113.0/27'],
        }),
        { id: 'au-syd', name: 'Sydney', capacity_gb: 0, zones: [], volume_offers: [] },
      ],
      organizations: [
        organization('reg', {
          members: [{ email: 'viewer@reg.test', password: OWNER_PASSWORD, role: 'viewer' }],
          api_keys: [
            { name: 'read', scopes: ['vm:read'], token: apiToken('reg', 'ro') },
            { name: 'audit-only', scopes: ['audit:read'], token: apiToken('reg', 'wo') },
          ],
        }),
      ],
    });
  });
  afterAll(async () => t?.close());

  const expected = {
    regions: [
      { id: 'au-syd', name: 'Sydney', volume_types: [], zones: [], snapshot_price_per_gb_month: null, reserved_ipv4_price_per_month: null },
      {
        id: 'id-jkt',
        name: 'Jakarta',
        volume_types: ['premium', 'ssd'],
        zones: [
          { id: 'id-jkt-a', available: true },
          { id: 'id-jkt-b', available: false },
        ],
        snapshot_price_per_gb_month: { USD: '0.01000', IDR: '160' },
        reserved_ipv4_price_per_month: { USD: '1.00000', IDR: '16000' },
      },
      {
        id: 'sg-sin',
        name: 'Singapore',
        volume_types: ['ssd'],
        zones: [
          { id: 'sg-sin-a', available: false },
          { id: 'sg-sin-b', available: true },
        ],
        snapshot_price_per_gb_month: null,
        reserved_ipv4_price_per_month: null,
      },
    ],
  };

  it('lists every region with the disk types it sells and its zones, ordered by id, to an API key with vm:read', async () => {
    const res = await t.http.get('/v1/regions').set(bearer(apiToken('reg', 'ro')));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual(expected);
    expect(Object.keys(res.body.regions[1])).toEqual(['id', 'name', 'volume_types', 'zones', 'snapshot_price_per_gb_month', 'reserved_ipv4_price_per_month']);
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

    const noVm = await t.http.get('/v1/regions').set(bearer(apiToken('reg', 'wo')));
    expect(noVm.status).toBe(403);
    expect(noVm.body).toEqual({
      error: { code: 'forbidden', message: 'The API key lacks the scope vm:read', request_id: noVm.headers['x-request-id'], details: {} },
    });
  });

  describe('operator catalog changes (CLI zone:set and region:capacity use cases)', () => {
    const ro = bearer(apiToken('reg', 'ro'));
    const cliError = async (argv: string[]) => {
      try {
        await runCommand(argv, t.settings);
        return 'no error';
      } catch (err) {
        const e = err as { code: string; message: string };
        return `${e.code}: ${e.message}`;
      }
    };

    it('opens and closes a zone, audited, and GET /v1/regions shows it at once', async () => {
      const setZone = t.app.get(SetZoneAvailability);
      expect(await setZone.execute({ zoneId: 'id-jkt-b', available: 'true' })).toEqual({ id: 'id-jkt-b', regionId: 'id-jkt', available: true });
      const opened = await t.http.get('/v1/regions').set(ro);
      expect(opened.body.regions[1].zones).toEqual([
        { id: 'id-jkt-a', available: true },
        { id: 'id-jkt-b', available: true },
      ]);
      expect(await setZone.execute({ zoneId: 'id-jkt-b', available: 'false' })).toEqual({ id: 'id-jkt-b', regionId: 'id-jkt', available: false });
      expect((await t.http.get('/v1/regions').set(ro)).body).toEqual(expected);
      expect(
        await t.sql("SELECT actor_type, action, target_id, data FROM audit_log WHERE action = 'catalog.zone_set' ORDER BY id"),
      ).toEqual([
        { actor_type: 'system', action: 'catalog.zone_set', target_id: 'id-jkt-b', data: { available: true } },
        { actor_type: 'system', action: 'catalog.zone_set', target_id: 'id-jkt-b', data: { available: false } },
      ]);
    });

    it('sets a region capacity, and volume-options stock follows at once', async () => {
      const setCapacity = t.app.get(SetRegionCapacity);
      const stock = async () => (await t.http.get('/v1/volume-options?region=id-jkt').set(ro)).body.in_stock;
      expect(await stock()).toBe(true);
      // the fixture organization holds one 100 GB volume in id-jkt; premium min_gb is 10
      expect(await setCapacity.execute({ regionId: 'id-jkt', gb: '109' })).toEqual({ id: 'id-jkt', name: 'Jakarta', capacityGb: 109 });
      expect(await stock()).toBe(false);
      await setCapacity.execute({ regionId: 'id-jkt', gb: '110' });
      expect(await stock()).toBe(true);
      await setCapacity.execute({ regionId: 'id-jkt', gb: '20000' });
      expect(await t.sql("SELECT capacity_gb::text FROM regions WHERE id = 'id-jkt'")).toEqual([{ capacity_gb: '20000' }]);
    });

    it('refuses bad input and unknown ids, changing nothing', async () => {
      expect(await cliError(['zone:set', '--available', 'true'])).toBe('invalid_request: --zone is required');
      expect(await cliError(['region:capacity', '--region', 'id-jkt', '--gb', '-5'])).toMatch(/^invalid_request: /);
      expect(await cliError(['region:capacity', '--region', 'id-jkt'])).toBe('invalid_request: --gb is required');

      const setZone = t.app.get(SetZoneAvailability);
      const setCapacity = t.app.get(SetRegionCapacity);
      await expect(setZone.execute({ zoneId: 'xx-nowhere-a', available: 'true' })).rejects.toMatchObject({ code: 'not_found', message: 'Zone xx-nowhere-a not found' });
      await expect(setCapacity.execute({ regionId: 'xx-nowhere', gb: '10' })).rejects.toMatchObject({ code: 'not_found', message: 'Region xx-nowhere not found' });
      await expect(setZone.execute({ zoneId: 'id-jkt-b', available: 'yes' })).rejects.toMatchObject({
        code: 'invalid_request', message: 'available must be true or false', details: { field: 'available' },
      });
      for (const gb of ['1.5', '-5', '', '99999999999999999']) {
        await expect(setCapacity.execute({ regionId: 'id-jkt', gb })).rejects.toMatchObject({
          code: 'invalid_request', message: 'gb must be a whole number of GB, 0 or more', details: { field: 'gb' },
        });
      }
      expect((await t.http.get('/v1/regions').set(ro)).body).toEqual(expected);
      expect(await t.sql("SELECT count(*)::int AS n FROM audit_log WHERE action LIKE 'catalog.%' AND target_id LIKE 'xx-%'")).toEqual([{ n: 0 }]);
    });
  });
});
