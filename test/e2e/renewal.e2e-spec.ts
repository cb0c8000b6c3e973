import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { FixedClock } from '../../src/shared/kernel/clock/clock';
import { apiToken, bearer, organization, region } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';

const NOW = '2026-11-22T10:00:00.000Z';
const OP_ID = /^op_[A-Za-z0-9]{24}$/;

/** An organization whose one volume (vol_<suffix>data1, 100 GB premium, attached) has the given fields. */
function org(suffix: string, volume: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  const base = organization(suffix);
  return {
    ...base,
    api_keys: [...base.api_keys, { name: 'ro', scopes: ['vm:read'], token: apiToken(suffix, 'ro') }],
    volumes: [{ ...base.volumes[0], ...volume }],
    ...extra,
  };
}

describe('POST /v1/volumes/{id}/renew', () => {
  let t: TestApp;
  const clock = new FixedClock(new Date(NOW));
  const keyIds = new Map<string, string>();

  beforeAll(async () => {
    t = await startTestApp({}, clock);
    const seeded = await t.seed({
      regions: [region()],
      organizations: [
        org('usd'),
        org('idr'),
        org('dflt', { currency: 'IDR', server: undefined, mount_path: undefined }),
        org('expd', { expires_at: '2026-10-31T00:00:00.000Z' }),
        org('jan', { expires_at: '2027-01-31T00:00:00.000Z' }),
        org('bad'),
        org('poor', {}, { wallet: { USD: '5.99999' } }),
        org('gone'),
        org('busy', {}, { wallet: { USD: '1.00000', IDR: '1500000' } }),
        org('fail'),
      ],
    });
    for (const o of seeded.organizations) keyIds.set(o.id, o.api_keys[0].id);
  });
  afterAll(async () => t?.close());

  const renew = (suffix: string, body: unknown, volumeId = `vol_${suffix}data1`) =>
    t.http.post(`/v1/volumes/${volumeId}/renew`).set(bearer(apiToken(suffix, 'rw'))).send(body as object);

  async function volumeJson(suffix: string) {
    const res = await t.http.get(`/v1/volumes/vol_${suffix}data1`).set(bearer(apiToken(suffix, 'rw')));
    expect(res.status).toBe(200);
    return res.body;
  }

  const ledger = (orgId: string) =>
    t.sql(`SELECT kind, currency, amount::text AS amount, operation_id FROM wallet_ledger WHERE org_id = $1 ORDER BY id`, [orgId]);
  const balances = (orgId: string) =>
    t.sql(`SELECT currency, available::text AS available, reserved::text AS reserved FROM wallet_balances WHERE org_id = $1 ORDER BY currency`, [orgId]);
  const operationsOf = (orgId: string) => t.sql(`SELECT id, status FROM operations WHERE org_id = $1`, [orgId]);

  it('accepts a USD renewal: 202 {volume, operation}, Location, a hold; the worker renews and charges exactly once', async () => {
    const before = await volumeJson('usd');
    const res = await renew('usd', { term_months: 3, currency: 'USD' });

    expect(res.status).toBe(202);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const opId: string = res.body.operation.id;
    expect(opId).toMatch(OP_ID);
    expect(res.headers.location).toBe(`/v1/operations/${opId}`);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    expect(res.body).toEqual({
      volume: {
        id: 'vol_usddata1',
        name: 'data-1',
        status: 'attached',
        type: 'premium',
        region: 'id-jkt',
        zone: 'id-jkt-a',
        size_gb: 100,
        server: { id: 'vm_usdweb1', name: 'web-1' },
        mount_path: '/mnt/data',
        mounted: true,
        term_months: 1,
        billing: { currency: 'USD', amount: '2.00000' },
        price_per_gb_month: { USD: '0.02000', IDR: '320' },
        expires_at: '2026-12-21T00:00:00.000Z',
        note: null,
        labels: {},
        delete_protection: false,
        created_at: before.created_at,
        deleted_at: null,
        deleted_reason: null, suspended_at: null, release_at: null, auto_renew: { enabled: false, term_months: null, last_attempt: null, next_attempt_at: null }, previous_server_id: null,
      },
      operation: {
        id: opId,
        type: 'volume.renew',
        status: 'pending',
        vm_id: 'vm_usdweb1',
        volume_id: 'vol_usddata1',
        steps: [{ name: 'renewing', status: 'running' }],
        result: null,
        error: null,
        created_at: NOW,
        finished_at: null,
      },
    });
    // Reserved, not yet charged.
    expect(await balances('org_usd')).toEqual([
      { currency: 'IDR', available: '1500000', reserved: '0' },
      { currency: 'USD', available: '9400000', reserved: '600000' },
    ]);
    const wallet = await t.http.get('/v1/wallet').set(bearer(apiToken('usd', 'rw')));
    expect(wallet.body).toEqual({
      balances: [
        { currency: 'USD', available: '94.00000', reserved: '6.00000' },
        { currency: 'IDR', available: '1500000', reserved: '0' },
      ],
    });
    const pending = await t.http.get(`/v1/operations/${opId}`).set(bearer(apiToken('usd', 'ro')));
    expect(pending.status).toBe(200);
    expect(pending.body).toEqual(res.body.operation);

    clock.set(new Date('2026-11-22T10:00:05.000Z'));
    try {
      const report = await t.app.get(AdvanceOperations).runOnce();
      expect(report).toEqual({ claimed: 1, succeeded: 1, failed: 0, skipped: 0 });
    } finally {
      clock.set(new Date(NOW));
    }

    const done = await t.http.get(`/v1/operations/${opId}`).set(bearer(apiToken('usd', 'ro')));
    expect(done.body).toEqual({
      id: opId,
      type: 'volume.renew',
      status: 'succeeded',
      vm_id: 'vm_usdweb1',
      volume_id: 'vol_usddata1',
      steps: [{ name: 'renewing', status: 'succeeded' }],
      result: {
        volume_id: 'vol_usddata1',
        term_months: 3,
        expires_at: '2027-03-21T00:00:00.000Z',
        charged: { currency: 'USD', amount: '6.00000' },
      },
      error: null,
      created_at: NOW,
      finished_at: '2026-11-22T10:00:05.000Z',
    });
    expect(await volumeJson('usd')).toEqual({
      ...before,
      term_months: 3,
      billing: { currency: 'USD', amount: '6.00000' },
      expires_at: '2027-03-21T00:00:00.000Z',
    });
    expect(await balances('org_usd')).toEqual([
      { currency: 'IDR', available: '1500000', reserved: '0' },
      { currency: 'USD', available: '9400000', reserved: '0' },
    ]);
    expect(await ledger('org_usd')).toEqual([
      { kind: 'credit', currency: 'USD', amount: '10000000', operation_id: null },
      { kind: 'credit', currency: 'IDR', amount: '1500000', operation_id: null },
      { kind: 'hold', currency: 'USD', amount: '600000', operation_id: opId },
      { kind: 'capture', currency: 'USD', amount: '600000', operation_id: opId },
    ]);
    // A second worker pass finds nothing to do: executed exactly once.
    expect(await t.app.get(AdvanceOperations).runOnce()).toEqual({ claimed: 0, succeeded: 0, failed: 0, skipped: 0 });
    expect(await ledger('org_usd')).toHaveLength(4);
  });

  it('writes an audit row for the accepted renewal: actor, organization, volume, amount, IP', async () => {
    const rows = await t.sql(
      `SELECT org_id, actor_type, actor_id, action, target_id, ip_address, data FROM audit_log WHERE org_id = 'org_usd' AND action = 'volume.renew'`,
    );
    const [op] = await operationsOf('org_usd');
    expect(rows).toEqual([
      {
        org_id: 'org_usd',
        actor_type: 'api_key',
        actor_id: keyIds.get('org_usd'),
        action: 'volume.renew',
        target_id: 'vol_usddata1',
        ip_address: expect.stringMatching(/127\.0\.0\.1$|^::1$/),
        data: { operation_id: op.id, term_months: 3, currency: 'USD', amount: '6.00000' },
      },
    ]);
  });

  it('renews in IDR at the IDR price the volume was bought at, and bills it in IDR', async () => {
    const res = await renew('idr', { term_months: 12, currency: 'IDR' });
    expect(res.status).toBe(202);
    const opId = res.body.operation.id;
    expect(await balances('org_idr')).toEqual([
      { currency: 'IDR', available: '1116000', reserved: '384000' },
      { currency: 'USD', available: '10000000', reserved: '0' },
    ]);
    await t.app.get(AdvanceOperations).runOnce();
    const op = await t.http.get(`/v1/operations/${opId}`).set(bearer(apiToken('idr', 'rw')));
    expect(op.body.status).toBe('succeeded');
    expect(op.body.result).toEqual({
      volume_id: 'vol_idrdata1',
      term_months: 12,
      expires_at: '2027-12-21T00:00:00.000Z',
      charged: { currency: 'IDR', amount: '384000' },
    });
    const volume = await volumeJson('idr');
    expect(volume).toMatchObject({ term_months: 12, billing: { currency: 'IDR', amount: '384000' }, expires_at: '2027-12-21T00:00:00.000Z' });
    expect(await balances('org_idr')).toEqual([
      { currency: 'IDR', available: '1116000', reserved: '0' },
      { currency: 'USD', available: '10000000', reserved: '0' },
    ]);
    expect((await ledger('org_idr')).slice(2)).toEqual([
      { kind: 'hold', currency: 'IDR', amount: '384000', operation_id: opId },
      { kind: 'capture', currency: 'IDR', amount: '384000', operation_id: opId },
    ]);
  });

  it('charges in the volume\'s billing currency when currency is omitted; a detached disk gives vm_id null', async () => {
    const res = await renew('dflt', { term_months: 1 });
    expect(res.status).toBe(202);
    expect(res.body.volume).toMatchObject({ status: 'available', server: null, mount_path: null, mounted: false, billing: { currency: 'IDR', amount: '32000' } });
    expect(res.body.operation).toMatchObject({ vm_id: null, volume_id: 'vol_dfltdata1', status: 'pending' });
    expect(await balances('org_dflt')).toEqual([
      { currency: 'IDR', available: '1468000', reserved: '32000' },
      { currency: 'USD', available: '10000000', reserved: '0' },
    ]);
    await t.app.get(AdvanceOperations).runOnce();
    expect(await volumeJson('dflt')).toMatchObject({ term_months: 1, billing: { currency: 'IDR', amount: '32000' }, expires_at: '2027-01-21T00:00:00.000Z' });
    expect(await balances('org_dflt')).toEqual([
      { currency: 'IDR', available: '1468000', reserved: '0' },
      { currency: 'USD', available: '10000000', reserved: '0' },
    ]);
  });

  it('renews an expired volume from now, and clamps a month end (Jan 31 + 1 month = Feb 28)', async () => {
    expect((await renew('expd', { term_months: 1 })).status).toBe(202);
    expect((await renew('jan', { term_months: 1 })).status).toBe(202);
    await t.app.get(AdvanceOperations).runOnce();
    expect((await volumeJson('expd')).expires_at).toBe('2026-12-22T10:00:00.000Z');
    expect((await volumeJson('jan')).expires_at).toBe('2027-02-28T00:00:00.000Z');
  });

  describe('400 invalid_request naming the field, nothing written', () => {
    const cases: [string, unknown, string, string][] = [
      ['term_months missing', { currency: 'USD' }, 'term_months', 'term_months is required: 1, 3 or 12'],
      ['term_months null', { term_months: null }, 'term_months', 'term_months is required: 1, 3 or 12'],
      ['term_months not allowed', { term_months: 2 }, 'term_months', 'term_months must be 1, 3 or 12'],
      ['term_months a string', { term_months: '3' }, 'term_months', 'term_months must be an integer: 1, 3 or 12'],
      ['term_months fractional', { term_months: 1.5 }, 'term_months', 'term_months must be an integer: 1, 3 or 12'],
      ['currency unknown', { term_months: 1, currency: 'EUR' }, 'currency', 'currency must be USD or IDR'],
      ['currency lower case', { term_months: 1, currency: 'usd' }, 'currency', 'currency must be USD or IDR'],
      ['currency a number', { term_months: 1, currency: 840 }, 'currency', 'currency must be a string: USD or IDR'],
      ['currency null', { term_months: 1, currency: null }, 'currency', 'currency must be a string: USD or IDR'],
      ['body an array', [1], 'body', 'Request body must be a JSON object'],
    ];
    it.each(cases)('%s', async (_name, body, field, message) => {
      const res = await renew('bad', body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: { code: 'invalid_request', message, request_id: res.headers['x-request-id'], details: { field } } });
    });

    it('body not JSON, or no body', async () => {
      const res = await t.http
        .post('/v1/volumes/vol_baddata1/renew')
        .set(bearer(apiToken('bad', 'rw')))
        .set('Content-Type', 'application/json')
        .send('{"term_months": 1');
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: { code: 'invalid_request', message: 'Request body is not valid JSON', request_id: res.headers['x-request-id'], details: { field: 'body' } },
      });
      const empty = await t.http.post('/v1/volumes/vol_baddata1/renew').set(bearer(apiToken('bad', 'rw')));
      expect(empty.status).toBe(400);
      expect(empty.body.error).toMatchObject({ code: 'invalid_request', details: { field: 'body' } });
    });

    it('a volume id holding a NUL character (no 500 from the database)', async () => {
      const res = await renew('bad', { term_months: 1 }, 'vol_baddata1%00').set('Idempotency-Key', 'nul-id');
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: { code: 'invalid_request', message: 'id must not contain NUL (\\u0000) characters', request_id: res.headers['x-request-id'], details: { field: 'id' } },
      });
    });

    it('a body nested deeper than 64 levels, with or without an Idempotency-Key (no 500 from a blown stack)', async () => {
      for (const depth of [65, 5000]) {
        for (const key of [undefined, `deep-${depth}`]) {
          const req = t.http
            .post('/v1/volumes/vol_baddata1/renew')
            .set(bearer(apiToken('bad', 'rw')))
            .set('Content-Type', 'application/json');
          if (key) req.set('Idempotency-Key', key);
          const res = await req.send(`{"term_months": 1, "extra": ${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`);
          expect(res.status).toBe(400);
          expect(res.body).toEqual({
            error: {
              code: 'invalid_request',
              message: 'Request body is nested deeper than 64 levels',
              request_id: res.headers['x-request-id'],
              details: { field: 'body' },
            },
          });
        }
      }
      // 64 levels are parsed: the answer is about the member, not the nesting.
      const ok = await t.http
        .post('/v1/volumes/vol_baddata1/renew')
        .set(bearer(apiToken('bad', 'rw')))
        .set('Content-Type', 'application/json')
        .send(`{"term_months": 2, "extra": ${'['.repeat(63)}${']'.repeat(63)}}`);
      expect(ok.status).toBe(400);
      expect(ok.body.error).toEqual({
        code: 'invalid_request',
        message: 'extra is not a member of this request body (check its spelling: unknown members are refused)',
        request_id: ok.headers['x-request-id'],
        details: { field: 'extra' },
      });
    });

    it('Idempotency-Key empty, longer than 255 or not printable ASCII', async () => {
      for (const key of ['', 'k'.repeat(256), 'café-key', 'tab\there']) {
        const res = await renew('bad', { term_months: 1 }).set('Idempotency-Key', key);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({
          error: {
            code: 'invalid_request',
            message: 'Idempotency-Key must be 1 to 255 printable ASCII characters',
            request_id: res.headers['x-request-id'],
            details: { field: 'Idempotency-Key' },
          },
        });
      }
    });

    afterAll(async () => {
      expect(await operationsOf('org_bad')).toEqual([]);
      expect((await ledger('org_bad')).map((r) => r.kind)).toEqual(['credit', 'credit']);
      expect(await t.sql(`SELECT key_sha256 FROM idempotency_records WHERE org_id = 'org_bad'`)).toEqual([]);
    });
  });

  it('checks in order: 401, 403 before 400, 400 before 409 idempotency_conflict, that before 404, 404 before 402', async () => {
    const envelope = (res: { headers: Record<string, string> }, code: string, message: string, details: object = {}) => ({
      error: { code, message, request_id: res.headers['x-request-id'], details },
    });
    const unauth = await t.http.post('/v1/volumes/vol_baddata1/renew').send({ term_months: 7 });
    expect(unauth.status).toBe(401);
    expect(unauth.body).toEqual(envelope(unauth, 'unauthorized', 'Missing Authorization header; send "Authorization: Bearer <token>"'));
    const ro = await t.http.post('/v1/volumes/vol_baddata1/renew').set(bearer(apiToken('bad', 'ro'))).send({ term_months: 7 });
    expect(ro.status).toBe(403);
    expect(ro.body).toEqual(envelope(ro, 'forbidden', 'The API key lacks the scope vm:write'));
    const badBodyUnknownVolume = await renew('bad', { term_months: 7 }, 'vol_nope');
    expect(badBodyUnknownVolume.status).toBe(400);
    expect(badBodyUnknownVolume.body).toEqual(envelope(badBodyUnknownVolume, 'invalid_request', 'term_months must be 1, 3 or 12', { field: 'term_months' }));

    // A key used once (a stored 404): a bad body is still 400, another request with it 409 even for an unknown volume.
    const first = await renew('poor', { term_months: 12 }, 'vol_nope').set('Idempotency-Key', 'order-key');
    expect(first.status).toBe(404);
    expect(first.body).toEqual(envelope(first, 'not_found', 'Volume vol_nope not found'));
    const badBody = await renew('poor', { term_months: 7 }, 'vol_nope').set('Idempotency-Key', 'order-key');
    expect(badBody.status).toBe(400);
    expect(badBody.body).toEqual(envelope(badBody, 'invalid_request', 'term_months must be 1, 3 or 12', { field: 'term_months' }));
    const reused = await renew('poor', { term_months: 12 }, 'vol_other').set('Idempotency-Key', 'order-key');
    expect(reused.status).toBe(409);
    expect(reused.body).toEqual(
      envelope(reused, 'idempotency_conflict', 'This Idempotency-Key was already used with a different request; use a new key for a new request'),
    );
    // 404 before 402: the poor wallet covers no 12 months, the unknown volume answers first.
    const unknownPoor = await renew('poor', { term_months: 12 }, 'vol_nope');
    expect(unknownPoor.status).toBe(404);
    expect(unknownPoor.body).toEqual(envelope(unknownPoor, 'not_found', 'Volume vol_nope not found'));
  });

  it('402 insufficient_balance with required, available and currency; nothing reserved or created', async () => {
    const res = await renew('poor', { term_months: 3 });
    expect(res.status).toBe(402);
    expect(res.body).toEqual({
      error: {
        code: 'insufficient_balance',
        message: 'The wallet cannot cover 6.00000 USD; available: 5.99999 USD',
        request_id: res.headers['x-request-id'],
        details: { required: '6.00000', available: '5.99999', currency: 'USD' },
      },
    });
    const idr = await renew('poor', { term_months: 1, currency: 'IDR' });
    expect(idr.status).toBe(402);
    expect(idr.body.error.details).toEqual({ required: '32000', available: '0', currency: 'IDR' });

    expect(await operationsOf('org_poor')).toEqual([]);
    expect(await balances('org_poor')).toEqual([{ currency: 'USD', available: '599999', reserved: '0' }]);
    expect(await t.sql(`SELECT 1 FROM audit_log WHERE org_id = 'org_poor' AND action = 'volume.renew'`)).toEqual([]);

    // Exactly enough is enough.
    const one = await renew('poor', { term_months: 1 });
    expect(one.status).toBe(202);
  });

  it('404 not_found for an unknown volume and for another organization\'s volume', async () => {
    for (const id of ['vol_doesnotexist', 'vol_usddata1']) {
      const res = await renew('gone', { term_months: 1 }, id);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: { code: 'not_found', message: `Volume ${id} not found`, request_id: res.headers['x-request-id'], details: {} } });
    }
  });

  it('409 invalid_state for a deleted volume', async () => {
    await t.sql(
      `UPDATE volumes SET status = 'deleted', deleted_at = now(), server_id = NULL, mount_path = NULL, mounted = false WHERE id = 'vol_gonedata1'`,
    );
    const res = await renew('gone', { term_months: 1 });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      error: { code: 'invalid_state', message: 'Volume vol_gonedata1 is deleted and cannot be renewed', request_id: res.headers['x-request-id'], details: {} },
    });
    expect(await operationsOf('org_gone')).toEqual([]);
    expect(await balances('org_gone')).toEqual([
      { currency: 'IDR', available: '1500000', reserved: '0' },
      { currency: 'USD', available: '10000000', reserved: '0' },
    ]);
  });

  it('409 invalid_state while an operation is pending or running on the volume (before 402)', async () => {
    // 1.00000 USD covers no renewal: first make room with an IDR renewal, then try again.
    const first = await renew('busy', { term_months: 1, currency: 'IDR' });
    expect(first.status).toBe(202);
    const again = await renew('busy', { term_months: 1, currency: 'IDR' });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({
      error: {
        code: 'invalid_state',
        message: `Volume vol_busydata1 already has an operation pending or running (${first.body.operation.id}); wait for it to end`,
        request_id: again.headers['x-request-id'],
        details: { operation_id: first.body.operation.id },
      },
    });
    // The volume check comes before the wallet check: USD cannot be covered, still 409.
    const poor = await renew('busy', { term_months: 12, currency: 'USD' });
    expect(poor.status).toBe(409);
    expect(await operationsOf('org_busy')).toEqual([{ id: first.body.operation.id, status: 'pending' }]);

    await t.app.get(AdvanceOperations).runOnce();
    const afterwards = await renew('busy', { term_months: 1, currency: 'IDR' });
    expect(afterwards.status).toBe(202);
  });

  it('fails the operation when the volume is deleted before the worker runs: hold released, volume untouched', async () => {
    await t.app.get(AdvanceOperations).runUntilIdle();
    const res = await renew('fail', { term_months: 1 });
    expect(res.status).toBe(202);
    const opId = res.body.operation.id;
    await t.sql(
      `UPDATE volumes SET status = 'deleted', deleted_at = '2026-11-22T10:00:01Z', server_id = NULL, mount_path = NULL, mounted = false WHERE id = 'vol_faildata1'`,
    );
    const before = await volumeJson('fail');
    expect(await t.app.get(AdvanceOperations).runOnce()).toEqual({ claimed: 1, succeeded: 0, failed: 1, skipped: 0 });
    const op = await t.http.get(`/v1/operations/${opId}`).set(bearer(apiToken('fail', 'rw')));
    expect(op.body).toEqual({
      id: opId,
      type: 'volume.renew',
      status: 'failed',
      vm_id: 'vm_failweb1',
      volume_id: 'vol_faildata1',
      steps: [{ name: 'renewing', status: 'failed' }],
      result: null,
      error: { code: 'invalid_state', message: 'Volume vol_faildata1 is deleted and cannot be renewed' },
      created_at: NOW,
      finished_at: NOW,
    });
    expect(await volumeJson('fail')).toEqual(before);
    expect(before).toMatchObject({ term_months: 1, expires_at: '2026-12-21T00:00:00.000Z', billing: { currency: 'USD', amount: '2.00000' } });
    expect(await balances('org_fail')).toEqual([
      { currency: 'IDR', available: '1500000', reserved: '0' },
      { currency: 'USD', available: '10000000', reserved: '0' },
    ]);
    expect((await ledger('org_fail')).slice(2)).toEqual([
      { kind: 'hold', currency: 'USD', amount: '200000', operation_id: opId },
      { kind: 'release', currency: 'USD', amount: '200000', operation_id: opId },
    ]);
  });
});
