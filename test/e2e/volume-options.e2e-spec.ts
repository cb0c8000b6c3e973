import { Db } from '../../src/shared/database/transaction';
import { CREDENTIAL_CACHE_TTL_MS } from '../../src/modules/auth/application/credential-cache';
import { CATALOG_CACHE_TTL_MS } from '../../src/modules/options/application/get-volume-options.use-case';
import { TestApp, startTestApp } from '../support/test-app';
import { OWNER_PASSWORD, apiToken, bearer, organization, region } from '../support/fixtures';

/** A volume of the seed format; attached when `server` is given. */
const volume = (id: string, opts: { server?: string; zone?: string; region?: string; size?: number; type?: 'premium' | 'ssd' } = {}) => ({
  id,
  name: id.replace(/^vol_/, ''),
  type: opts.type ?? 'premium',
  region: opts.region ?? 'id-jkt',
  zone: opts.zone ?? 'id-jkt-a',
  size_gb: opts.size ?? 10,
  term_months: 1,
  currency: 'USD',
  ...(opts.server ? { server: opts.server, mount_path: `/mnt/${id}` } : {}),
});

const server = (id: string, name: string, zone = 'id-jkt-a', regionId = 'id-jkt') => ({ id, name, region: regionId, zone });

const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

/** Inserts a detached volume straight into the table (what a purchase would leave behind). */
async function insertVolume(t: TestApp, id: string, regionId: string, zone: string, sizeGb: number, type = 'premium') {
  await t.sql(
    `INSERT INTO volumes (id, org_id, name, status, type, region_id, zone_id, size_gb, term_months, billing_currency,
                          billing_amount, price_usd_minor, price_idr_minor, expires_at)
     VALUES ($1, 'org_opt', $1, 'available', $2, $3, $4, $5, 1, 'USD', 0, 0, 0, now() + interval '1 month')`,
    [id, type, regionId, zone, sizeGb],
  );
}

const ERROR = (res: { headers: Record<string, string> }, code: string, message: string, details: object = {}) => ({
  error: { code, message, request_id: res.headers['x-request-id'], details },
});

describe('GET /v1/volume-options', () => {
  let t: TestApp;
  const rw = bearer(apiToken('opt', 'rw'));
  const noVmScope = bearer(apiToken('opt', 'wo'));

  beforeAll(async () => {
    t = await startTestApp();
    await t.seed({
      regions: [
        region('id-jkt'),
        region('rt-one', { name: 'Round trips' }),
        {
          id: 'sg-sin',
          name: 'Singapore',
          capacity_gb: 100,
          zones: [{ id: 'sg-sin-a', available: true }],
          volume_offers: [
            { type: 'premium', min_gb: 50, max_gb: 100, step_gb: 50, terms: [12, 1], per_server_limit: 2, price_per_gb_month: { USD: '1.2', IDR: '15000' } },
          ],
        },
        {
          id: 'fl-tst',
          name: 'Flip test',
          capacity_gb: 200,
          zones: [{ id: 'fl-tst-a', available: true }],
          volume_offers: [
            { type: 'premium', min_gb: 10, max_gb: 100, step_gb: 10, terms: [1], per_server_limit: 1, price_per_gb_month: { USD: '0', IDR: '0' } },
            { type: 'ssd', min_gb: 20, max_gb: 100, step_gb: 10, terms: [1], per_server_limit: 1, price_per_gb_month: { USD: '0.00001', IDR: '1' } },
          ],
        },
      ],
      organizations: [
        organization('opt', {
          members: [
            { email: 'owner@opt.test', password: OWNER_PASSWORD, role: 'owner' },
            { email: 'viewer@opt.test', password: OWNER_PASSWORD, role: 'viewer' },
          ],
          api_keys: [
            { name: 'rw', scopes: ['vm:read', 'vm:write'], token: apiToken('opt', 'rw') },
            { name: 'audit-only', scopes: ['audit:read'], token: apiToken('opt', 'wo') },
          ],
          servers: [
            server('vm_optweb1', 'web-1'),
            server('vm_optapp2', 'app-2'),
            server('vm_optapp1', 'app'),
            server('vm_optfull', 'backup'),
            server('vm_optfour', 'cache'),
            server('vm_optgone', 'aaa-gone'),
            server('vm_optdb1', 'db-1', 'id-jkt-b'),
            server('vm_optsg', 'sg-1', 'sg-sin-a', 'sg-sin'),
          ],
          volumes: [
            volume('vol_optdata1', { server: 'vm_optweb1', size: 100 }),
            ...range(8).map((i) => volume(`vol_optfull${i}`, { server: 'vm_optfull', type: i % 2 ? 'premium' : 'ssd', size: 20 })),
            ...range(4).map((i) => volume(`vol_optfour${i}`, { server: 'vm_optfour', type: 'ssd', size: 20 })),
            volume('vol_optloose', { size: 30 }),
            volume('vol_optsg', { server: 'vm_optsg', region: 'sg-sin', zone: 'sg-sin-a', size: 60 }),
          ],
        }),
        organization('oth', { servers: [server('vm_othweb1', 'aaa-other')], volumes: [] }),
        organization('opt2', {
          members: [{ email: 'owner@opt.test', password: OWNER_PASSWORD, role: 'viewer' }],
          api_keys: [],
          servers: [server('vm_opt2srv', 'second-org-server')],
          volumes: [],
        }),
      ],
    });
    await t.sql("UPDATE servers SET deleted_at = now() WHERE id = 'vm_optgone'");
  });
  afterAll(async () => t?.close());

  const jktZoneB = { id: 'id-jkt-b', available: false, servers: [{ id: 'vm_optdb1', name: 'db-1' }] };

  it('answers premium by default with every field of interface.md 2.4, in order, with the caller’s eligible servers', async () => {
    const res = await t.http.get('/v1/volume-options?region=id-jkt').set(rw);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      region: 'id-jkt',
      type: 'premium',
      in_stock: true,
      min_gb: 10,
      max_gb: 4000,
      step_gb: 10,
      terms: [1, 3, 12],
      per_server_limit: 8,
      price_per_gb_month: { USD: '0.02000', IDR: '320' },
      zones: [
        {
          id: 'id-jkt-a',
          available: true,
          // by name then id; backup (8 disks, the limit) and aaa-gone (deleted) are left out, and so is
          // aaa-other (another organization's)
          servers: [
            { id: 'vm_optapp1', name: 'app' },
            { id: 'vm_optapp2', name: 'app-2' },
            { id: 'vm_optfour', name: 'cache' },
            { id: 'vm_optweb1', name: 'web-1' },
          ],
        },
        jktZoneB,
      ],
    });
    expect(Object.keys(res.body)).toEqual([
      'region', 'type', 'in_stock', 'min_gb', 'max_gb', 'step_gb', 'terms', 'per_server_limit', 'price_per_gb_month', 'zones',
    ]);
    expect(Object.keys(res.body.price_per_gb_month)).toEqual(['USD', 'IDR']);
    expect(Object.keys(res.body.zones[0])).toEqual(['id', 'available', 'servers']);

    const explicit = await t.http.get('/v1/volume-options?region=id-jkt&type=premium').set(rw);
    expect(explicit.status).toBe(200);
    expect(explicit.body).toEqual(res.body);
  });

  it('answers ssd with its own limits and prices; a server with 4 disks is full for ssd (limit 4)', async () => {
    const res = await t.http.get('/v1/volume-options').query({ region: 'id-jkt', type: 'ssd' }).set(rw);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      region: 'id-jkt',
      type: 'ssd',
      in_stock: true,
      min_gb: 20,
      max_gb: 2000,
      step_gb: 10,
      terms: [1, 3, 12],
      per_server_limit: 4,
      price_per_gb_month: { USD: '0.01250', IDR: '200' },
      zones: [
        {
          id: 'id-jkt-a',
          available: true,
          servers: [
            { id: 'vm_optapp1', name: 'app' },
            { id: 'vm_optapp2', name: 'app-2' },
            { id: 'vm_optweb1', name: 'web-1' },
          ],
        },
        jktZoneB,
      ],
    });
  });

  it('says out of stock when the free capacity is below min_gb, formats prices as in 2.2 and sorts terms', async () => {
    // capacity 100, one 60 GB volume: 40 GB free < min_gb 50
    const res = await t.http.get('/v1/volume-options?region=sg-sin').set(rw);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      region: 'sg-sin',
      type: 'premium',
      in_stock: false,
      min_gb: 50,
      max_gb: 100,
      step_gb: 50,
      terms: [1, 12],
      per_server_limit: 2,
      price_per_gb_month: { USD: '1.20000', IDR: '15000' },
      zones: [{ id: 'sg-sin-a', available: true, servers: [{ id: 'vm_optsg', name: 'sg-1' }] }],
    });
  });

  it('flips in_stock to false when volumes fill the shared capacity, and back when one is deleted', async () => {
    const stock = async () => {
      const [premium, ssd] = await Promise.all(
        ['premium', 'ssd'].map((type) => t.http.get('/v1/volume-options').query({ region: 'fl-tst', type }).set(rw)),
      );
      expect(premium.status).toBe(200);
      expect(ssd.status).toBe(200);
      return { premium: premium.body.in_stock, ssd: ssd.body.in_stock };
    };
    // A deleted volume never counts.
    await t.sql(
      `INSERT INTO volumes (id, org_id, name, status, type, region_id, zone_id, size_gb, term_months, billing_currency,
                            billing_amount, price_usd_minor, price_idr_minor, expires_at, deleted_at)
       VALUES ('vol_flipold', 'org_opt', 'old', 'deleted', 'premium', 'fl-tst', 'fl-tst-a', 1000, 1, 'USD', 0, 0, 0, now(), now())`,
    );
    expect(await stock()).toEqual({ premium: true, ssd: true });

    await insertVolume(t, 'vol_flip1', 'fl-tst', 'fl-tst-a', 150, 'premium');
    await insertVolume(t, 'vol_flip2', 'fl-tst', 'fl-tst-a', 40, 'ssd');
    // 10 GB free: exactly premium's min_gb (in stock), below ssd's 20 (premium and ssd share the capacity)
    expect(await stock()).toEqual({ premium: true, ssd: false });

    await insertVolume(t, 'vol_flip3', 'fl-tst', 'fl-tst-a', 5, 'ssd');
    expect(await stock()).toEqual({ premium: false, ssd: false });

    await t.sql("UPDATE volumes SET status = 'deleted', deleted_at = now() WHERE id = 'vol_flip2'");
    expect(await stock()).toEqual({ premium: true, ssd: true });
  });

  it('leaves a server out once it reaches the limit and lists it again when a disk leaves it', async () => {
    const sgServers = async () => (await t.http.get('/v1/volume-options?region=sg-sin').set(rw)).body.zones[0].servers;
    expect(await sgServers()).toEqual([{ id: 'vm_optsg', name: 'sg-1' }]);
    await t.sql(
      `INSERT INTO volumes (id, org_id, name, status, type, region_id, zone_id, size_gb, server_id, term_months,
                            billing_currency, billing_amount, price_usd_minor, price_idr_minor, expires_at)
       VALUES ('vol_optsg2', 'org_opt', 'sg2', 'attached', 'premium', 'sg-sin', 'sg-sin-a', 1, 'vm_optsg', 1, 'USD', 0, 0, 0, now())`,
    );
    expect(await sgServers()).toEqual([]); // 2 disks = per_server_limit 2
    await t.sql("UPDATE volumes SET status = 'deleted', deleted_at = now(), server_id = NULL WHERE id = 'vol_optsg2'");
    expect(await sgServers()).toEqual([{ id: 'vm_optsg', name: 'sg-1' }]);
  });

  it('shows a session the servers of its first organization, or of the one X-Org-ID selects, never another’s', async () => {
    const login = await t.http.post('/v1/auth/login').send({ email: 'owner@opt.test', password: OWNER_PASSWORD });
    expect(login.status).toBe(200);
    const session = bearer(login.body.token);

    const first = await t.http.get('/v1/volume-options?region=id-jkt').set(session);
    expect(first.status).toBe(200);
    expect(first.body.zones[0].servers.map((s: { id: string }) => s.id)).toEqual(['vm_optapp1', 'vm_optapp2', 'vm_optfour', 'vm_optweb1']);

    const second = await t.http.get('/v1/volume-options?region=id-jkt').set(session).set('X-Org-ID', 'org_opt2');
    expect(second.status).toBe(200);
    expect(second.body.zones).toEqual([
      { id: 'id-jkt-a', available: true, servers: [{ id: 'vm_opt2srv', name: 'second-org-server' }] },
      { id: 'id-jkt-b', available: false, servers: [] },
    ]);

    const foreign = await t.http.get('/v1/volume-options?region=id-jkt').set(session).set('X-Org-ID', 'org_oth');
    expect(foreign.status).toBe(403);
    expect(foreign.body.error.code).toBe('forbidden');

    const viewerLogin = await t.http.post('/v1/auth/login').send({ email: 'viewer@opt.test', password: OWNER_PASSWORD });
    const viewer = await t.http.get('/v1/volume-options?region=id-jkt').set(bearer(viewerLogin.body.token));
    expect(viewer.status).toBe(200);
    expect(viewer.body).toEqual(first.body);
  });

  it('shows another organization only its own servers', async () => {
    const res = await t.http.get('/v1/volume-options?region=id-jkt').set(bearer(apiToken('oth', 'rw')));
    expect(res.status).toBe(200);
    expect(res.body.zones).toEqual([
      { id: 'id-jkt-a', available: true, servers: [{ id: 'vm_othweb1', name: 'aaa-other' }] },
      { id: 'id-jkt-b', available: false, servers: [] },
    ]);
  });

  it('reads the catalog in at most two SQL statements, and in one while the offer and zones are cached', async () => {
    const exec = jest.spyOn(t.app.get(Db), 'exec');
    try {
      const catalogStatements = () => exec.mock.calls.filter(([sql]) => /\bFROM region(s|_usage) r\b/.test(sql)).length;
      const first = await t.http.get('/v1/volume-options?region=rt-one').set(rw);
      expect(first.status).toBe(200);
      expect(catalogStatements()).toBe(2);
      exec.mockClear();
      const second = await t.http.get('/v1/volume-options?region=rt-one').set(rw);
      expect(second.body).toEqual(first.body);
      expect(catalogStatements()).toBe(1);
    } finally {
      exec.mockRestore();
    }
  });

  it('answers from one SQL statement at steady state: the credential from the 1 s cache, free capacity from the region counter', async () => {
    const exec = jest.spyOn(t.app.get(Db), 'exec');
    try {
      // Steady state: the second request within the credential cache's 1 s of the first one's read.
      // The first request must read the credential and the catalog itself (an entry cached earlier
      // could expire between the two), so each pair starts once any earlier entry of either cache
      // has expired. On a loaded machine the two may be further apart than 1 s: such a pair is
      // tried again.
      let statements: string[] = [];
      for (let attempt = 1; attempt <= 8; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, Math.max(CREDENTIAL_CACHE_TTL_MS, CATALOG_CACHE_TTL_MS) + 20));
        const started = performance.now();
        const warm = await t.http.get('/v1/volume-options?region=rt-one').set(rw);
        expect(warm.status).toBe(200);
        exec.mockClear();
        const res = await t.http.get('/v1/volume-options?region=rt-one').set(rw);
        expect(res.status).toBe(200);
        expect(res.body).toEqual(warm.body);
        statements = exec.mock.calls.map(([sql]) => sql);
        if (performance.now() - started < CREDENTIAL_CACHE_TTL_MS) break;
      }
      expect(statements).toHaveLength(1);
      expect(statements[0]).toMatch(/\(r\.capacity_gb - r\.used_gb\)/);
      expect(statements[0]).not.toMatch(/sum\(/);
    } finally {
      exec.mockRestore();
    }
  });

  it('answers 401 without a valid token, before validating the query', async () => {
    const none = await t.http.get('/v1/volume-options');
    expect(none.status).toBe(401);
    expect(none.body).toEqual(ERROR(none, 'unauthorized', 'Missing Authorization header; send "Authorization: Bearer <token>"'));

    const bad = await t.http.get('/v1/volume-options?region=id-jkt').set(bearer(apiToken('nobody', 'rw')));
    expect(bad.status).toBe(401);
    expect(bad.body).toEqual(ERROR(bad, 'unauthorized', 'Invalid token'));
  });

  it('answers 403 to an API key without vm:read (nor vm:write, which includes it)', async () => {
    const res = await t.http.get('/v1/volume-options?region=id-jkt').set(noVmScope);
    expect(res.status).toBe(403);
    expect(res.body).toEqual(ERROR(res, 'forbidden', 'The API key lacks the scope vm:read'));
  });

  it('answers 400 naming region when it is missing, empty or repeated', async () => {
    for (const query of ['', '?region=', '?type=premium', '?region=id-jkt&region=sg-sin']) {
      const res = await t.http.get(`/v1/volume-options${query}`).set(rw);
      expect(res.status).toBe(400);
      const message = query.includes('&region') ? 'region must be a single string' : 'region is required';
      expect(res.body).toEqual(ERROR(res, 'invalid_request', message, { field: 'region' }));
    }
  });

  it('answers 400 naming region when it holds a NUL character (no 500 from the database)', async () => {
    const res = await t.http.get('/v1/volume-options?region=id-jkt%00').set(rw);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(ERROR(res, 'invalid_request', 'region must not contain NUL (\\u0000) characters', { field: 'region' }));
  });

  it('answers 400 naming type when it is not premium or ssd', async () => {
    for (const query of ['type=hdd', 'type=', 'type=PREMIUM', 'type=ssd&type=premium']) {
      const res = await t.http.get(`/v1/volume-options?region=id-jkt&${query}`).set(rw);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(ERROR(res, 'invalid_request', 'type must be premium or ssd', { field: 'type' }));
    }
  });

  it('answers 400 naming region with details.valid for an unknown region, 404 not_found for a region that sells no disk of that type', async () => {
    const unknown = await t.http.get('/v1/volume-options?region=xx-nowhere').set(rw);
    expect(unknown.status).toBe(400);
    const regions = (await t.sql<{ id: string }>('SELECT id FROM regions ORDER BY id COLLATE "C"')).map((r) => r.id);
    expect(regions.length).toBeGreaterThan(1);
    expect(unknown.body).toEqual(ERROR(unknown, 'invalid_request', `region xx-nowhere is no region; valid: ${regions.join(', ')}`, { field: 'region', valid: regions }));

    const noSsd = await t.http.get('/v1/volume-options?region=sg-sin&type=ssd').set(rw);
    expect(noSsd.status).toBe(404);
    expect(noSsd.body).toEqual(ERROR(noSsd, 'not_found', 'Region sg-sin sells no ssd disks'));
  });

  it('ignores unknown query parameters and answers HEAD-less wrong methods with 405', async () => {
    const extra = await t.http.get('/v1/volume-options?region=sg-sin&colour=blue').set(rw);
    expect(extra.status).toBe(200);
    expect(extra.body.region).toBe('sg-sin');

    const post = await t.http.post('/v1/volume-options').set(rw).send({});
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
  });
});
