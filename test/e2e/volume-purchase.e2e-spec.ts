import { FixedClock } from '../../src/shared/kernel/clock/clock';
import { errorBody } from '../support/assertions';
import { OWNER_PASSWORD, apiToken, bearer, organization, region } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';
import { setProviderDown } from '../support/provider';

const NOW = '2026-11-23T10:00:00.000Z';

/**
 * POST /v1/volumes (lifecycle.md "Buying"): the 202 with its whole body and Location, the state
 * left behind (volume row, wallet and ledger, region counter, options, operation, audit, quote),
 * every error in its check order with its whole envelope, quotes, Idempotency-Key, 503.
 */
describe('POST /v1/volumes (purchase)', () => {
  let t: TestApp;
  const clock = new FixedClock(new Date(NOW));
  const rw = bearer(apiToken('pu', 'rw'));
  const ro = bearer(apiToken('pu', 'ro'));
  const poor = bearer(apiToken('pp', 'rw'));
  let viewer: { Authorization: string };
  let developer: { Authorization: string };

  beforeAll(async () => {
    t = await startTestApp({}, clock);
    const base = organization('pu');
    await t.seed({
      regions: [
        region('id-jkt'),
        {
          // Small: 300 GB, 100 used by vol_pusg1; two disks per server.
          ...region('sg-sin'),
          capacity_gb: 300,
          volume_offers: [
            { type: 'premium', min_gb: 50, max_gb: 500, step_gb: 50, terms: [1, 12], per_server_limit: 2, price_per_gb_month: { USD: '0.03000', IDR: '500' } },
          ],
        },
      ],
      organizations: [
        {
          ...base,
          members: [
            { email: 'owner@pu.test', password: OWNER_PASSWORD, role: 'owner' },
            { email: 'dev@pu.test', password: OWNER_PASSWORD, role: 'developer' },
            { email: 'viewer@pu.test', password: OWNER_PASSWORD, role: 'viewer' },
          ],
          api_keys: [...base.api_keys, { name: 'ro', scopes: ['vm:read'], token: apiToken('pu', 'ro') }],
          servers: [
            ...base.servers,
            { id: 'vm_pub1', name: 'b-1', region: 'id-jkt', zone: 'id-jkt-b' },
            { id: 'vm_pusg1', name: 'sg-1', region: 'sg-sin', zone: 'sg-sin-a' },
          ],
          volumes: [
            ...base.volumes,
            {
              id: 'vol_pusg1', name: 'sg-data', type: 'premium', region: 'sg-sin', zone: 'sg-sin-a', size_gb: 100, term_months: 1,
              currency: 'USD', server: 'vm_pusg1', mount_path: '/mnt/sg', expires_at: '2026-12-21T00:00:00.000Z',
            },
          ],
        },
        organization('pp', { wallet: { USD: '1.00000', IDR: '0' } }),
        organization('px'),
      ],
    });
    const login = async (email: string) => bearer((await t.http.post('/v1/auth/login').send({ email, password: OWNER_PASSWORD })).body.token);
    viewer = await login('viewer@pu.test');
    developer = await login('dev@pu.test');
  });
  afterAll(async () => t?.close());

  const buy = (body: object, headers = rw) => t.http.post('/v1/volumes').set(headers).send(body);
  const balances = (org = 'org_pu') =>
    t.sql(`SELECT currency, available::text, reserved::text FROM wallet_balances WHERE org_id = $1 ORDER BY currency`, [org]);
  const usedGb = async (id: string) => (await t.sql<{ used_gb: string }>(`SELECT used_gb::text FROM region_usage WHERE id = $1`, [id]))[0].used_gb;
  const counts = async () =>
    (
      await t.sql<{ volumes: number; operations: number; ledger: number; audit: number }>(
        `SELECT (SELECT count(*)::int FROM volumes) AS volumes, (SELECT count(*)::int FROM operations) AS operations,
                (SELECT count(*)::int FROM wallet_ledger) AS ledger, (SELECT count(*)::int FROM audit_log WHERE action = 'volume.create') AS audit`,
      )
    )[0];

  const ok = { name: 'db-1', region: 'id-jkt', size_gb: 100, term_months: 12, currency: 'USD' };

  it('202 {volume, operation} with Location: creating, zone defaulted, price frozen, hold, capacity, operation, audit', async () => {
    const before = await balances();
    expect(await usedGb('id-jkt')).toBe('300');
    const res = await buy({ ...ok, labels: { env: 'prod' }, note: 'orders' }).set('X-Forwarded-For', '203.0.113.9');
    expect(res.status).toBe(202);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const volumeId = res.body.volume.id;
    const opId = res.body.operation.id;
    expect(res.headers.location).toBe(`/v1/operations/${opId}`);
    expect(res.body).toEqual({
      volume: {
        id: expect.stringMatching(/^vol_[A-Za-z0-9_-]{20,}$/),
        name: 'db-1',
        status: 'creating',
        type: 'premium',
        region: 'id-jkt',
        zone: 'id-jkt-a',
        size_gb: 100,
        server: null,
        mount_path: null,
        mounted: false,
        term_months: 12,
        billing: { currency: 'USD', amount: '24.00000' },
        price_per_gb_month: { USD: '0.02000', IDR: '320' },
        expires_at: '2027-11-23T10:00:00.000Z',
        note: 'orders',
        labels: { env: 'prod' },
        delete_protection: false,
        created_at: NOW,
        deleted_at: null,
        deleted_reason: null, suspended_at: null, release_at: null, auto_renew: { enabled: false, term_months: null, last_attempt: null, next_attempt_at: null }, previous_server_id: null,
      },
      operation: {
        id: expect.stringMatching(/^op_[A-Za-z0-9_-]{20,}$/),
        type: 'volume.create',
        status: 'pending',
        vm_id: null,
        volume_id: volumeId,
        steps: [
          { name: 'payment_reserved', status: 'succeeded' },
          { name: 'creating_volume', status: 'pending' },
          { name: 'ready', status: 'pending' },
        ],
        result: null,
        error: null,
        created_at: NOW,
        finished_at: null,
      },
    });
    expect(before).toEqual([
      { currency: 'IDR', available: '1500000', reserved: '0' },
      { currency: 'USD', available: '10000000', reserved: '0' },
    ]);
    expect(await balances()).toEqual([
      { currency: 'IDR', available: '1500000', reserved: '0' },
      { currency: 'USD', available: '7600000', reserved: '2400000' },
    ]);
    expect(await t.sql(`SELECT kind, currency, amount::text FROM wallet_ledger WHERE operation_id = $1`, [opId])).toEqual([
      { kind: 'hold', currency: 'USD', amount: '2400000' },
    ]);
    expect(await usedGb('id-jkt')).toBe('400');
    expect(await t.sql(`SELECT type, status, vm_id, volume_id, params FROM operations WHERE id = $1`, [opId])).toEqual([
      {
        type: 'volume.create', status: 'pending', vm_id: null, volume_id: volumeId,
        params: { size_gb: 100, type: 'premium', zone_id: 'id-jkt-a', server_id: null, mount_path: null, term_months: 12, currency: 'USD', amount: '24.00000' },
      },
    ]);
    expect(await t.sql(`SELECT actor_type, actor_id, target_id, data FROM audit_log WHERE action = 'volume.create' AND target_id = $1`, [volumeId])).toEqual([
      {
        actor_type: 'api_key', actor_id: expect.stringMatching(/^key_/), target_id: volumeId,
        data: {
          operation_id: opId, name: 'db-1', region: 'id-jkt', zone: 'id-jkt-a', type: 'premium', size_gb: 100, term_months: 12,
          currency: 'USD', amount: '24.00000', server_id: null, mount_path: null, quote_id: null,
        },
      },
    ]);
    const get = await t.http.get(`/v1/volumes/${volumeId}`).set(ro);
    expect(get.body).toEqual(res.body.volume);
    const op = await t.http.get(res.headers.location).set(ro);
    expect(op.body).toEqual(res.body.operation);
  });

  it('with a server: attaching step, vm_id, default mount path in params; the server leaves the options once full', async () => {
    const options = async () => (await t.http.get('/v1/volume-options?region=sg-sin').set(rw)).body;
    const before = await options();
    expect(before.in_stock).toBe(true);
    expect(before.zones).toEqual([
      { id: 'sg-sin-a', available: true, servers: [{ id: 'vm_pusg1', name: 'sg-1' }] },
      { id: 'sg-sin-b', available: false, servers: [] },
    ]);
    const res = await buy({ name: 'sg-2', region: 'sg-sin', size_gb: 150, term_months: 1, currency: 'IDR', server_id: 'vm_pusg1' }, developer);
    expect(res.status).toBe(202);
    expect(res.body.volume).toEqual(
      expect.objectContaining({
        status: 'creating', zone: 'sg-sin-a', server: null, mount_path: null, mounted: false, term_months: 1,
        billing: { currency: 'IDR', amount: '75000' }, price_per_gb_month: { USD: '0.03000', IDR: '500' }, expires_at: '2026-12-23T10:00:00.000Z',
      }),
    );
    expect(res.body.operation).toEqual(
      expect.objectContaining({
        vm_id: 'vm_pusg1',
        steps: [
          { name: 'payment_reserved', status: 'succeeded' },
          { name: 'creating_volume', status: 'pending' },
          { name: 'attaching', status: 'pending' },
          { name: 'ready', status: 'pending' },
        ],
      }),
    );
    expect((await t.sql(`SELECT params FROM operations WHERE id = $1`, [res.body.operation.id]))[0]).toEqual({
      params: { size_gb: 150, type: 'premium', zone_id: 'sg-sin-a', server_id: 'vm_pusg1', mount_path: '/mnt/sg-2', term_months: 1, currency: 'IDR', amount: '75000' },
    });
    // 1 attached + 1 on its way = the limit of 2: the server is no longer offered; 250 of 300 GB used.
    const after = await options();
    expect(after.zones[0]).toEqual({ id: 'sg-sin-a', available: true, servers: [] });
    expect(after.in_stock).toBe(true);
    expect(await usedGb('sg-sin')).toBe('250');

    const full = await buy({ name: 'sg-3', region: 'sg-sin', size_gb: 50, term_months: 1, currency: 'USD', server_id: 'vm_pusg1' });
    expect(full.status).toBe(409);
    expect(full.body).toEqual(
      errorBody(full, 'quota_exceeded', 'Server vm_pusg1 already holds 2 data disks (the limit), counting attaches and purchases still in progress', {
        limit: 2,
        server_id: 'vm_pusg1',
      }),
    );
    // The last 50 GB without a server; then the region is out of stock.
    const last = await buy({ name: 'sg-3', region: 'sg-sin', size_gb: 50, term_months: 1, currency: 'USD', mount_path: undefined });
    expect(last.status).toBe(202);
    expect((await options()).in_stock).toBe(false);
    const none = await buy({ name: 'sg-4', region: 'sg-sin', size_gb: 50, term_months: 1, currency: 'USD' });
    expect(none.status).toBe(409);
    expect(none.body).toEqual(errorBody(none, 'out_of_stock', 'Region sg-sin has less than 50 GB of disk capacity left'));
    expect(await usedGb('sg-sin')).toBe('300');
  });

  it('explicit zone and mount path; an unavailable zone is 409 out_of_stock and nothing is written', async () => {
    const res = await buy({ ...ok, name: 'web-data', zone: 'id-jkt-a', server_id: 'vm_puweb1', mount_path: '/srv/data', delete_protection: true, type: 'ssd', size_gb: 20, term_months: 3 });
    expect(res.status).toBe(202);
    expect(res.body.volume).toEqual(expect.objectContaining({ type: 'ssd', size_gb: 20, delete_protection: true, billing: { currency: 'USD', amount: '0.75000' } }));
    expect((await t.sql<{ params: { mount_path: string } }>(`SELECT params FROM operations WHERE id = $1`, [res.body.operation.id]))[0].params.mount_path).toBe('/srv/data');

    const n = await counts();
    const used = await usedGb('id-jkt');
    const closed = await buy({ ...ok, name: 'closed', zone: 'id-jkt-b' });
    expect(closed.status).toBe(409);
    expect(closed.body).toEqual(errorBody(closed, 'out_of_stock', 'Zone id-jkt-b does not accept new disks at the moment; choose another zone'));
    const viaServer = await buy({ ...ok, name: 'closed', server_id: 'vm_pub1' });
    expect(viaServer.status).toBe(409);
    expect(viaServer.body.error.code).toBe('out_of_stock');
    expect(await counts()).toEqual(n);
    expect(await usedGb('id-jkt')).toBe(used);
  });

  it.each([
    [{ ...ok, name: undefined }, 'name', 'name is required'],
    [{ ...ok, name: '-bad' }, 'name', 'name must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit'],
    [{ ...ok, region: 7 }, 'region', 'region must be a string'],
    [{ ...ok, size_gb: '100' }, 'size_gb', 'size_gb must be a whole number of GB'],
    [{ ...ok, term_months: 2 }, 'term_months', 'term_months must be 1, 3 or 12'],
    [{ ...ok, currency: 'EUR' }, 'currency', 'currency must be USD or IDR'],
    [{ ...ok, type: 'hdd' }, 'type', 'type must be premium or ssd'],
    [{ ...ok, zone: 3 }, 'zone', 'zone must be a string'],
    [{ ...ok, server_id: null }, 'server_id', 'server_id must be a string'],
    [{ ...ok, note: 5 }, 'note', 'note must be a string or null'],
    [{ ...ok, labels: { Bad: 'x' } }, 'labels.Bad', 'labels: key "Bad" must be 1 to 63 of a-z, 0-9, ".", "_", "/", "-"'],
    [{ ...ok, delete_protection: 'yes' }, 'delete_protection', 'delete_protection must be true or false'],
    [{ ...ok, quote_id: 1 }, 'quote_id', 'quote_id must be a string'],
    [{ ...ok, mount_path: '/mnt/x' }, 'mount_path', 'mount_path is only allowed with server_id (the disk is mounted when it is attached)'],
    [{ ...ok, server_id: 'vm_puweb1', mount_path: 'mnt/x' }, 'mount_path', 'mount_path must be an absolute path: "/" followed by at most 254 characters, no NUL, no "." or ".." segment; got "mnt/x"'],
    [{ ...ok, size_gb: 105 }, 'size_gb', 'size_gb must be from 10 to 4000 in steps of 10 (10, 20, ...) for premium in id-jkt; got 105'],
    [{ ...ok, region: 'sg-sin', size_gb: 50, term_months: 3 }, 'term_months', 'term_months must be one of the terms sold for premium in sg-sin: 1, 12'],
    [{ ...ok, zone: 'sg-sin-a' }, 'zone', 'zone sg-sin-a is in region sg-sin, not in id-jkt'],
    [{ ...ok, server_id: 'vm_pusg1' }, 'server_id', 'server vm_pusg1 is in region sg-sin; the disk is bought in id-jkt'],
    [{ ...ok, zone: 'id-jkt-a', server_id: 'vm_pub1' }, 'server_id', 'server vm_pub1 is in zone id-jkt-b; the disk is bought in id-jkt-a'],
  ])('400 for %j naming %s; nothing written', async (body, field, message) => {
    const n = await counts();
    const res = await buy(body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorBody(res, 'invalid_request', message, { field }));
    expect(await counts()).toEqual(n);
  });

  it.each([
    [{ ...ok, region: 'sg-sin', type: 'ssd', size_gb: 50 }, 'Region sg-sin sells no ssd disks'],
    [{ ...ok, server_id: 'vm_pxweb1' }, 'Server vm_pxweb1 not found'],
    [{ ...ok, quote_id: 'quo_nope' }, 'Quote quo_nope not found'],
  ])('404 for %j; nothing written', async (body, message) => {
    const n = await counts();
    const res = await buy(body);
    expect(res.status).toBe(404);
    expect(res.body).toEqual(errorBody(res, 'not_found', message));
    expect(await counts()).toEqual(n);
  });

  it('400 for a region or zone that does not exist, naming the member with details.valid (the ids that would do); nothing written', async () => {
    const n = await counts();
    const regions = (await t.sql<{ id: string }>('SELECT id FROM regions ORDER BY id COLLATE "C"')).map((r) => r.id);
    const zones = (await t.sql<{ id: string }>(`SELECT id FROM zones WHERE region_id = 'id-jkt' ORDER BY id`)).map((r) => r.id);
    expect(regions.length).toBeGreaterThan(1);
    expect(zones.length).toBeGreaterThan(1);
    const region = await buy({ ...ok, region: 'xx-none' });
    expect(region.status).toBe(400);
    expect(region.body).toEqual(errorBody(region, 'invalid_request', `region xx-none is no region; valid: ${regions.join(', ')}`, { field: 'region', valid: regions }));
    const zone = await buy({ ...ok, zone: 'id-jkt-z' });
    expect(zone.status).toBe(400);
    expect(zone.body).toEqual(errorBody(zone, 'invalid_request', `zone id-jkt-z is no zone of region id-jkt; valid: ${zones.join(', ')}`, { field: 'zone', valid: zones }));
    expect(await counts()).toEqual(n);
  });

  it('403 for a read-only key and a viewer; 401 without a token', async () => {
    const key = await buy(ok, ro);
    expect(key.status).toBe(403);
    expect(key.body).toEqual(errorBody(key, 'forbidden', 'The API key lacks the scope vm:write'));
    const session = await buy(ok, viewer);
    expect(session.status).toBe(403);
    expect(session.body).toEqual(errorBody(session, 'forbidden', 'Role viewer may not do this; it needs one of: developer, admin, owner'));
    const anonymous = await t.http.post('/v1/volumes').send(ok);
    expect(anonymous.status).toBe(401);
  });

  it('409 conflict for a taken name (before out_of_stock); 402 with the balance details, nothing reserved', async () => {
    const taken = await buy({ ...ok, name: 'data-1', zone: 'id-jkt-b' });
    expect(taken.status).toBe(409);
    expect(taken.body).toEqual(
      errorBody(taken, 'conflict', 'The organization already has a volume named data-1; names are unique among volumes not deleted', { field: 'name' }),
    );
    const n = await counts();
    const used = await usedGb('id-jkt');
    const res = await buy({ ...ok, name: 'too-dear', size_gb: 100, term_months: 1 }, poor);
    expect(res.status).toBe(402);
    expect(res.body).toEqual(
      errorBody(res, 'insufficient_balance', 'The wallet cannot cover 2.00000 USD; available: 1.00000 USD', { required: '2.00000', available: '1.00000', currency: 'USD' }),
    );
    expect(await balances('org_pp')).toEqual([{ currency: 'USD', available: '100000', reserved: '0' }]);
    expect(await counts()).toEqual(n);
    expect(await usedGb('id-jkt')).toBe(used);
  });

  it('400 before 404 (lifecycle.md check order): a zone or server of another region, a member differing from the quote, even when something else named does not exist; nothing written', async () => {
    const n = await counts();
    const q = (await t.http.post('/v1/quotes').set(rw).send({ region: 'id-jkt', type: 'premium', size_gb: 100, term_months: 12, currency: 'USD' })).body as { id: string };
    const cases: [object, string, string][] = [
      [{ zone: 'sg-sin-a', region: 'xx-nowhere' }, 'zone', 'zone sg-sin-a is in region sg-sin, not in xx-nowhere'],
      [{ server_id: 'vm_pusg1', zone: 'id-jkt-z' }, 'server_id', 'server vm_pusg1 is in region sg-sin; the disk is bought in id-jkt'],
      [{ zone: 'id-jkt-a', server_id: 'vm_pub1', quote_id: 'quo_unknown' }, 'server_id', 'server vm_pub1 is in zone id-jkt-b; the disk is bought in id-jkt-a'],
      [{ size_gb: 200, quote_id: q.id, server_id: 'vm_nope' }, 'size_gb', `size_gb (200) differs from quote ${q.id} (100); send the quote's size_gb or leave out quote_id`],
      [{ currency: 'IDR', quote_id: q.id, zone: 'id-jkt-z' }, 'currency', `currency ("IDR") differs from quote ${q.id} ("USD"); send the quote's currency or leave out quote_id`],
    ];
    for (const [change, field, message] of cases) {
      const res = await buy({ ...ok, name: 'ordered', ...change });
      expect({ change, status: res.status, body: res.body }).toEqual({ change, status: 400, body: errorBody(res, 'invalid_request', message, { field }) });
    }
    // With nothing else to judge a 400 on, the zone that does not exist (400), then the 404 of what does not exist.
    const missing = await buy({ ...ok, name: 'ordered', zone: 'id-jkt-z', quote_id: q.id });
    expect(missing.body).toMatchObject({ error: { code: 'invalid_request', details: { field: 'zone' } } });
    const server = await buy({ ...ok, name: 'ordered', server_id: 'vm_nope', quote_id: q.id });
    expect(server.body).toEqual(errorBody(server, 'not_found', 'Server vm_nope not found'));
    expect(await counts()).toEqual(n);
  });

  describe('quotes', () => {
    const quote = async (body: object = { region: 'id-jkt', type: 'premium', size_gb: 100, term_months: 12, currency: 'USD' }) =>
      (await t.http.post('/v1/quotes').set(rw).send(body)).body as { id: string; amount: string };

    it("the quote's price applies (even after the offer changed); the quote is marked used; reusing it is 409 invalid_state", async () => {
      const q = await quote();
      await t.sql(`UPDATE volume_offers SET price_usd_minor = 9000 WHERE region_id = 'id-jkt' AND type = 'premium'`);
      try {
        clock.set(new Date('2026-11-23T10:09:59.000Z'));
        const res = await buy({ ...ok, name: 'quoted', quote_id: q.id });
        expect(res.status).toBe(202);
        expect(res.body.volume).toEqual(expect.objectContaining({ billing: { currency: 'USD', amount: '24.00000' }, price_per_gb_month: { USD: '0.02000', IDR: '320' } }));
        expect(await t.sql(`SELECT used_at, volume_id FROM quotes WHERE id = $1`, [q.id])).toEqual([
          { used_at: new Date('2026-11-23T10:09:59.000Z'), volume_id: res.body.volume.id },
        ]);
        const again = await buy({ ...ok, name: 'quoted-2', quote_id: q.id });
        expect(again.status).toBe(409);
        expect(again.body).toEqual(errorBody(again, 'invalid_state', `Quote ${q.id} was already used by a purchase at 2026-11-23T10:09:59.000Z; request a new one`));
        // Without a quote, today's price.
        const today = await buy({ ...ok, name: 'unquoted', size_gb: 10, term_months: 1 });
        expect(today.body.volume.billing).toEqual({ currency: 'USD', amount: '0.90000' });
      } finally {
        clock.set(new Date(NOW));
        await t.sql(`UPDATE volume_offers SET price_usd_minor = 2000 WHERE region_id = 'id-jkt' AND type = 'premium'`);
      }
    });

    it('a member differing from the quote is 400 naming it; an expired quote 409 quote_expired; another org\'s 404', async () => {
      const q = await quote();
      const differs = await buy({ ...ok, name: 'q1', size_gb: 200, quote_id: q.id });
      expect(differs.status).toBe(400);
      expect(differs.body).toEqual(
        errorBody(differs, 'invalid_request', `size_gb (200) differs from quote ${q.id} (100); send the quote's size_gb or leave out quote_id`, { field: 'size_gb' }),
      );
      const currency = await buy({ ...ok, name: 'q1', currency: 'IDR', quote_id: q.id });
      expect(currency.body.error.details).toEqual({ field: 'currency' });
      clock.set(new Date('2026-11-23T10:10:00.001Z'));
      try {
        const expired = await buy({ ...ok, name: 'q1', quote_id: q.id });
        expect(expired.status).toBe(409);
        expect(expired.body).toEqual(
          errorBody(expired, 'quote_expired', `Quote ${q.id} expired at 2026-11-23T10:10:00.000Z (quotes last 10 minutes); request a new one`),
        );
      } finally {
        clock.set(new Date(NOW));
      }
      const foreign = await buy({ ...ok, name: 'q1', quote_id: q.id }, bearer(apiToken('px', 'rw')));
      expect(foreign.status).toBe(404);
      expect(foreign.body).toEqual(errorBody(foreign, 'not_found', `Quote ${q.id} not found`));
      expect(await t.sql(`SELECT used_at FROM quotes WHERE id = $1`, [q.id])).toEqual([{ used_at: null }]);
    });
  });

  it('Idempotency-Key: the replay is the same 202 to the byte, one volume and one hold; another body is 409; 409 answers are stored', async () => {
    const n = await counts();
    const wallet = await balances();
    const body = { ...ok, name: 'idem-1', size_gb: 10, term_months: 1 };
    const first = await buy(body).set('Idempotency-Key', 'buy-1');
    expect(first.status).toBe(202);
    const again = await buy(body).set('Idempotency-Key', 'buy-1');
    expect(again.status).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers.location).toBe(first.headers.location);
    expect(again.text).toBe(first.text);
    expect(await counts()).toEqual({ ...n, volumes: n.volumes + 1, operations: n.operations + 1, ledger: n.ledger + 1, audit: n.audit + 1 });
    expect(await balances()).toEqual([wallet[0], { currency: 'USD', available: String(Number(wallet[1].available) - 20000), reserved: String(Number(wallet[1].reserved) + 20000) }]);
    const conflict = await buy({ ...body, size_gb: 20 }).set('Idempotency-Key', 'buy-1');
    expect(conflict.status).toBe(409);
    expect(conflict.body.error.code).toBe('idempotency_conflict');

    // A 409 conflict is the request's answer: stored, replayed even after the name is free again.
    const taken = await buy({ ...body, name: 'data-1' }).set('Idempotency-Key', 'buy-2');
    expect(taken.status).toBe(409);
    const replay = await buy({ ...body, name: 'data-1' }).set('Idempotency-Key', 'buy-2');
    expect(replay.status).toBe(409);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.text).toBe(taken.text);
  });

  it('503 provider_unavailable while the provider is down: nothing reserved, nothing stored for the key', async () => {
    const n = await counts();
    const wallet = await balances();
    const used = await usedGb('id-jkt');
    await setProviderDown(t, true);
    try {
      const res = await buy({ ...ok, name: 'down-1' }).set('Idempotency-Key', 'buy-down');
      expect(res.status).toBe(503);
      expect(res.body).toEqual(errorBody(res, 'provider_unavailable', 'The storage provider is unavailable; nothing was reserved. Retry later'));
      // Errors before 503 still win.
      const taken = await buy({ ...ok, name: 'data-1' });
      expect(taken.body.error.code).toBe('conflict');
    } finally {
      await setProviderDown(t, false);
    }
    expect(await counts()).toEqual(n);
    expect(await balances()).toEqual(wallet);
    expect(await usedGb('id-jkt')).toBe(used);
    const retry = await buy({ ...ok, name: 'down-1' }).set('Idempotency-Key', 'buy-down');
    expect(retry.status).toBe(202);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
  });
});
