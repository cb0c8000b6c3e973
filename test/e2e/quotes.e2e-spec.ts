import { idempotencyKeyDigest } from '../../src/modules/idempotency/domain/idempotency';
import { FixedClock } from '../../src/shared/kernel/clock/clock';
import { OWNER_PASSWORD, apiToken, bearer, organization, region } from '../support/fixtures';
import { errorBody } from '../support/assertions';
import { TestApp, startTestApp } from '../support/test-app';

const NOW = '2026-11-23T10:00:00.000Z';
const IN_TEN_MINUTES = '2026-11-23T10:10:00.000Z';

/** POST /v1/quotes and GET /v1/quotes/{id} (lifecycle.md "Quotes"): whole bodies, rows, idempotency. */
describe('quotes', () => {
  let t: TestApp;
  const clock = new FixedClock(new Date(NOW));
  const rw = bearer(apiToken('quo', 'rw'));
  const ro = bearer(apiToken('quo', 'ro'));
  const other = bearer(apiToken('quox', 'rw'));
  let viewer: { Authorization: string };
  let developer: { Authorization: string };


  beforeAll(async () => {
    t = await startTestApp({}, clock);
    const base = organization('quo');
    await t.seed({
      regions: [
        region('id-jkt'),
        {
          // Sells premium only, for 1 and 12 months.
          ...region('sg-sin'),
          volume_offers: [
            { type: 'premium', min_gb: 50, max_gb: 500, step_gb: 25, terms: [12, 1], per_server_limit: 2, price_per_gb_month: { USD: '0.03333', IDR: '533' } },
          ],
        },
      ],
      organizations: [
        {
          ...base,
          members: [
            { email: 'owner@quo.test', password: OWNER_PASSWORD, role: 'owner' },
            { email: 'dev@quo.test', password: OWNER_PASSWORD, role: 'developer' },
            { email: 'viewer@quo.test', password: OWNER_PASSWORD, role: 'viewer' },
          ],
          api_keys: [...base.api_keys, { name: 'ro', scopes: ['vm:read'], token: apiToken('quo', 'ro') }],
        },
        organization('quox'),
      ],
    });
    const login = async (email: string) => bearer((await t.http.post('/v1/auth/login').send({ email, password: OWNER_PASSWORD })).body.token);
    viewer = await login('viewer@quo.test');
    developer = await login('dev@quo.test');
  });
  afterAll(async () => t?.close());

  const quoteRows = () =>
    t.sql(`SELECT id, org_id, region_id, type, size_gb, term_months, currency, price_usd_minor::text, price_idr_minor::text, amount::text,
                  created_at, expires_at, used_at, volume_id FROM quotes ORDER BY created_at, id`);
  const count = async () => (await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM quotes`))[0].n;

  it('201 with the quote: 150 GB premium × 0.02000 USD × 12 months = 36.00000 USD, both prices, 10 minutes to use it', async () => {
    const res = await t.http.post('/v1/quotes').set(rw).send({ region: 'id-jkt', type: 'premium', size_gb: 150, term_months: 12, currency: 'USD' });
    expect(res.status).toBe(201);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['x-ratelimit-limit']).toBe('600');
    expect(res.body).toEqual({
      id: expect.stringMatching(/^quo_[A-Za-z0-9]{24}$/),
      kind: 'volume',
      region: 'id-jkt',
      type: 'premium',
      size_gb: 150,
      term_months: 12,
      currency: 'USD',
      price_per_gb_month: { USD: '0.02000', IDR: '320' },
      amount: '36.00000',
      created_at: NOW,
      expires_at: IN_TEN_MINUTES,
      used_at: null,
    });
    expect(await quoteRows()).toEqual([
      {
        id: res.body.id, org_id: 'org_quo', region_id: 'id-jkt', type: 'premium', size_gb: 150, term_months: 12, currency: 'USD',
        price_usd_minor: '2000', price_idr_minor: '320', amount: '3600000',
        created_at: new Date(NOW), expires_at: new Date(IN_TEN_MINUTES), used_at: null, volume_id: null,
      },
    ]);
    const get = await t.http.get(`/v1/quotes/${res.body.id}`).set(ro);
    expect(get.status).toBe(200);
    expect(get.body).toEqual(res.body);
  });

  it('in IDR, type defaulting to premium; an ssd quote; odd prices stay exact (325 GB × 0.03333 USD × 12 = 129.98700)', async () => {
    const idr = await t.http.post('/v1/quotes').set(developer).send({ region: 'id-jkt', size_gb: 4000, term_months: 3, currency: 'IDR' });
    expect(idr.status).toBe(201);
    expect(idr.body).toEqual(expect.objectContaining({ type: 'premium', size_gb: 4000, term_months: 3, currency: 'IDR', amount: '3840000', price_per_gb_month: { USD: '0.02000', IDR: '320' } }));
    const ssd = await t.http.post('/v1/quotes').set(rw).send({ region: 'id-jkt', type: 'ssd', size_gb: 40, term_months: 1, currency: 'IDR' });
    expect(ssd.body).toEqual(expect.objectContaining({ type: 'ssd', amount: '8000', price_per_gb_month: { USD: '0.01250', IDR: '200' } }));
    const odd = await t.http.post('/v1/quotes').set(rw).send({ region: 'sg-sin', size_gb: 325, term_months: 12, currency: 'USD' });
    expect(odd.body).toEqual(expect.objectContaining({ amount: '129.98700', price_per_gb_month: { USD: '0.03333', IDR: '533' } }));
    const oddIdr = await t.http.post('/v1/quotes').set(rw).send({ region: 'sg-sin', size_gb: 325, term_months: 12, currency: 'IDR' });
    expect(oddIdr.body.amount).toBe('2078700');
    expect(await t.sql(`SELECT amount::text FROM quotes WHERE id = $1`, [odd.body.id])).toEqual([{ amount: '12998700' }]);
  });

  it('a quote keeps its price when the offer changes; GET any role; another organization\'s or an unknown one is 404', async () => {
    const res = await t.http.post('/v1/quotes').set(rw).send({ region: 'id-jkt', type: 'premium', size_gb: 10, term_months: 1, currency: 'USD' });
    await t.sql(`UPDATE volume_offers SET price_usd_minor = 9999 WHERE region_id = 'id-jkt' AND type = 'premium'`);
    try {
      const get = await t.http.get(`/v1/quotes/${res.body.id}`).set(viewer);
      expect(get.status).toBe(200);
      expect(get.body).toEqual({ ...res.body, amount: '0.20000', price_per_gb_month: { USD: '0.02000', IDR: '320' } });
    } finally {
      await t.sql(`UPDATE volume_offers SET price_usd_minor = 2000 WHERE region_id = 'id-jkt' AND type = 'premium'`);
    }
    for (const [headers, id] of [[other, res.body.id], [rw, 'quo_nope']] as const) {
      const miss = await t.http.get(`/v1/quotes/${id}`).set(headers);
      expect(miss.status).toBe(404);
      expect(miss.body).toEqual(errorBody(miss, 'not_found', `Quote ${id} not found`));
    }
  });

  it('403 for a read-only key and a viewer session, nothing written', async () => {
    const n = await count();
    const body = { region: 'id-jkt', size_gb: 10, term_months: 1, currency: 'USD' };
    const key = await t.http.post('/v1/quotes').set(ro).send(body);
    expect(key.status).toBe(403);
    expect(key.body).toEqual(errorBody(key, 'forbidden', 'The API key lacks the scope vm:write'));
    const session = await t.http.post('/v1/quotes').set(viewer).send(body);
    expect(session.status).toBe(403);
    expect(session.body).toEqual(errorBody(session, 'forbidden', 'Role viewer may not do this; it needs one of: developer, admin, owner'));
    expect(await count()).toBe(n);
  });

  const ok = { region: 'id-jkt', type: 'premium', size_gb: 100, term_months: 12, currency: 'USD' };
  it.each([
    [{ ...ok, region: undefined }, 'region', 'region is required'],
    [{ ...ok, region: 5 }, 'region', 'region must be a string'],
    [{ ...ok, region: '' }, 'region', 'region must not be empty'],
    [{ ...ok, type: 'hdd' }, 'type', 'type must be premium or ssd'],
    [{ ...ok, type: null }, 'type', 'type must be a string: premium or ssd'],
    [{ ...ok, size_gb: undefined }, 'size_gb', 'size_gb is required (or plan, for a server quote)'],
    [{ ...ok, size_gb: '100' }, 'size_gb', 'size_gb must be a whole number of GB'],
    [{ ...ok, size_gb: 100.5 }, 'size_gb', 'size_gb must be a whole number of GB'],
    [{ ...ok, size_gb: 5 }, 'size_gb', 'size_gb must be from 10 to 4000 in steps of 10 (10, 20, ...) for premium in id-jkt; got 5'],
    [{ ...ok, size_gb: 105 }, 'size_gb', 'size_gb must be from 10 to 4000 in steps of 10 (10, 20, ...) for premium in id-jkt; got 105'],
    [{ ...ok, size_gb: 4010 }, 'size_gb', 'size_gb must be from 10 to 4000 in steps of 10 (10, 20, ...) for premium in id-jkt; got 4010'],
    [{ ...ok, type: 'ssd', size_gb: 10 }, 'size_gb', 'size_gb must be from 20 to 2000 in steps of 10 (20, 30, ...) for ssd in id-jkt; got 10'],
    [{ ...ok, region: 'sg-sin', size_gb: 60 }, 'size_gb', 'size_gb must be from 50 to 500 in steps of 25 (50, 75, ...) for premium in sg-sin; got 60'],
    [{ ...ok, term_months: undefined }, 'term_months', 'term_months is required: 1, 3 or 12'],
    [{ ...ok, term_months: 7 }, 'term_months', 'term_months must be 1, 3 or 12'],
    [{ ...ok, term_months: '12' }, 'term_months', 'term_months must be an integer: 1, 3 or 12'],
    [{ ...ok, region: 'sg-sin', size_gb: 50, term_months: 3 }, 'term_months', 'term_months must be one of the terms sold for premium in sg-sin: 1, 12'],
    [{ ...ok, currency: undefined }, 'currency', 'currency is required: USD or IDR'],
    [{ ...ok, currency: 'EUR' }, 'currency', 'currency must be USD or IDR'],
    [{ ...ok, currency: 'usd' }, 'currency', 'currency must be USD or IDR'],
    [{ ...ok, region: 'id\u0000jkt' }, 'region', 'region must not contain NUL (\\u0000) characters'],
    [[ok], 'body', 'Request body must be a JSON object'],
  ])('400 for %j naming %s, nothing written', async (body, field, message) => {
    const n = await count();
    const res = await t.http.post('/v1/quotes').set(rw).send(body as object);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorBody(res, 'invalid_request', message, { field }));
    expect(await count()).toBe(n);
  });

  it('400 naming region with details.valid for an unknown region (disk and server quotes), 404 for a region that sells no disk of the type, nothing written', async () => {
    const n = await count();
    const regions = (await t.sql<{ id: string }>('SELECT id FROM regions ORDER BY id COLLATE "C"')).map((r) => r.id);
    expect(regions.length).toBeGreaterThan(1);
    const unknown = await t.http.post('/v1/quotes').set(rw).send({ ...ok, region: 'xx-nowhere' });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual(errorBody(unknown, 'invalid_request', `region xx-nowhere is no region; valid: ${regions.join(', ')}`, { field: 'region', valid: regions }));
    const server = await t.http.post('/v1/quotes').set(rw).send({ region: 'xx-nowhere', plan: 'cx1', term_months: 1, currency: 'USD' });
    expect(server.status).toBe(400);
    expect(server.body).toEqual(errorBody(server, 'invalid_request', `region xx-nowhere is no region; valid: ${regions.join(', ')}`, { field: 'region', valid: regions }));
    const noSsd = await t.http.post('/v1/quotes').set(rw).send({ ...ok, region: 'sg-sin', type: 'ssd', size_gb: 3 });
    expect(noSsd.status).toBe(404);
    expect(noSsd.body).toEqual(errorBody(noSsd, 'not_found', 'Region sg-sin sells no ssd disks'));
    expect(await count()).toBe(n);
  });

  describe('Idempotency-Key', () => {
    const post = (body: object, key: string, headers = rw) => t.http.post('/v1/quotes').set(headers).set('Idempotency-Key', key).send(body);

    it('replays the 201 to the byte with Idempotent-Replayed; one quote; the key with another body is 409', async () => {
      const n = await count();
      const first = await post(ok, 'quote-key-1').set('X-Request-Id', 'quote-first');
      expect(first.status).toBe(201);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      clock.set(new Date('2026-11-23T10:05:00.000Z'));
      try {
        const again = await post({ currency: 'USD', term_months: 12, size_gb: 100, type: 'premium', region: 'id-jkt' }, 'quote-key-1').set('X-Request-Id', 'quote-second');
        expect(again.status).toBe(201);
        expect(again.headers['idempotent-replayed']).toBe('true');
        expect(again.headers['x-request-id']).toBe('quote-second');
        expect(again.text).toBe(first.text);
        expect(again.body.created_at).toBe(NOW);
      } finally {
        clock.set(new Date(NOW));
      }
      expect(await count()).toBe(n + 1);

      const conflict = await post({ ...ok, size_gb: 200 }, 'quote-key-1');
      expect(conflict.status).toBe(409);
      expect(conflict.body).toEqual(
        errorBody(conflict, 'idempotency_conflict', 'This Idempotency-Key was already used with a different request; use a new key for a new request'),
      );
      // A body error is answered before the key is looked at.
      const bad = await post({ ...ok, currency: 'EUR' }, 'quote-key-1');
      expect(bad.status).toBe(400);
      expect(bad.body.error.details).toEqual({ field: 'currency' });
      expect(await count()).toBe(n + 1);
      // The same key in another organization is its own.
      const elsewhere = await post(ok, 'quote-key-1', other);
      expect(elsewhere.status).toBe(201);
      expect(elsewhere.headers['idempotent-replayed']).toBeUndefined();
      expect(elsewhere.body.id).not.toBe(first.body.id);
    });

    it('stores a 404 and replays it; a 400 of the offer (size off the grid) stores nothing', async () => {
      const first = await post({ ...ok, region: 'sg-sin', type: 'ssd', size_gb: 3 }, 'quote-key-404');
      expect(first.status).toBe(404);
      const again = await post({ ...ok, region: 'sg-sin', type: 'ssd', size_gb: 3 }, 'quote-key-404');
      expect(again.status).toBe(404);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.text).toBe(first.text);

      const offGrid = await post({ ...ok, size_gb: 105 }, 'quote-key-400');
      expect(offGrid.status).toBe(400);
      const keys = ['quote-key-1', 'quote-key-404', 'quote-key-400'].map(idempotencyKeyDigest);
      expect(await t.sql(`SELECT key_sha256, status_code FROM idempotency_records WHERE key_sha256 = ANY($1) ORDER BY status_code`, [keys])).toEqual([
        { key_sha256: idempotencyKeyDigest('quote-key-1'), status_code: 201 },
        { key_sha256: idempotencyKeyDigest('quote-key-1'), status_code: 201 },
        { key_sha256: idempotencyKeyDigest('quote-key-404'), status_code: 404 },
      ]);
      const fixed = await post({ ...ok, size_gb: 110 }, 'quote-key-400');
      expect(fixed.status).toBe(201);
      expect(fixed.body.amount).toBe('26.40000');
    });
  });
});
