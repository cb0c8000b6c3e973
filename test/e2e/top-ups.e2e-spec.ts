import type { Server } from 'node:http';
import request from 'supertest';
import { ExpireTopUps } from '../../src/modules/funding/application/top-ups.use-cases';
import { MetricsServer } from '../../src/shared/observability/metrics-server';
import { OWNER_PASSWORD, apiToken, bearer, organization, region } from '../support/fixtures';
import { headOnly, rawBodyOf, rawRequestIdOf, rawStatusOf } from '../support/head-only';
import { PAYMENT_SECRET } from '../support/payments';
import { paymentProviders } from '../support/payment-providers';
import { TestApp, startTestApp } from '../support/test-app';
import { expectVerified } from '../support/verify';

/**
 * Wallet top-ups through the hosted checkout, once with the simulated provider and once with the
 * Stripe adapter against a local Stripe (test/support/stripe-mock.ts): create (every rule and
 * check order), GET, list, cancel, paying at the checkout, inbound events (signature,
 * duplicates, late payments, unmatched), expiry, and the wallet's history after each. What does
 * not reach the provider (the body's rules, access) and the simulator's own checkout page run
 * with the simulated provider only.
 */
const TU = /^tu_[A-Za-z0-9]{24}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe.each(paymentProviders())('wallet top-ups ($name)', (p) => {
  const sim = p.name === 'simulated';
  let t: TestApp;
  const rw = bearer(apiToken('tp', 'bw'));

  const seedOrg = (suffix: string) => ({
    ...organization(suffix, { wallet: { USD: '10.00000', IDR: '0' } }),
    members: [
      { email: `owner@${suffix}.test`, password: OWNER_PASSWORD, role: 'owner' },
      { email: `dev@${suffix}.test`, password: OWNER_PASSWORD, role: 'developer' },
    ],
    api_keys: [
      { name: 'billing', scopes: ['billing:write'], token: apiToken(suffix, 'bw') },
      { name: 'vm', scopes: ['vm:read', 'vm:write'], token: apiToken(suffix, 'vm') },
    ],
  });

  beforeAll(async () => {
    t = await startTestApp(await p.start());
    p.attach(t);
    await t.seed({ regions: [region()], organizations: [seedOrg('tp'), seedOrg('tq'), seedOrg('tl')] });
  });
  afterAll(async () => {
    await t?.close();
    await p.close();
  });

  const create = (body: unknown, headers: Record<string, string> = rw) => t.http.post('/v1/wallet/top-ups').set(headers).send(body as object);
  const site = () => request(t.app.getHttpServer());
  const pathOf = (url: string) => new URL(url).pathname;
  const balances = async (org = 'org_tp') =>
    t.sql<{ currency: string; available: string; reserved: string }>(`SELECT currency, available::text, reserved::text FROM wallet_balances WHERE org_id = $1 ORDER BY currency`, [org]);
  const credits = (topUpId: string) => t.sql(`SELECT amount::text, currency, org_id FROM wallet_ledger WHERE top_up_id = $1`, [topUpId]);
  const counts = async () =>
    (await t.sql<{ n: string }>(`SELECT (SELECT count(*) FROM top_ups) || '/' || (SELECT count(*) FROM payment_events) || '/' || (SELECT count(*) FROM audit_log) AS n`))[0].n + `/${await p.sessions()}`;
  const sessionEvent = p.event;
  const signature = p.sign;
  const post = (body: string, sig?: string, provider: string = p.name) => {
    const r = t.http.post(`/v1/payment-events/${provider}`).set('Content-Type', 'application/json');
    if (sig !== undefined) r.set('Stripe-Signature', sig);
    return r.send(body);
  };
  const sessionOf = async (topUpId: string) => (await t.sql<{ session_id: string }>(`SELECT session_id FROM top_ups WHERE id = $1`, [topUpId]))[0].session_id;

  it('201 {top_up} with Location: pending, a checkout_url, 30 minutes to pay; audited; nothing credited yet', async () => {
    const res = await create({ amount: '25.5', currency: 'USD', return_url: 'https://console.example.com/billing?tab=1' });
    expect(res.status).toBe(201);
    const id: string = res.body.top_up.id;
    expect(id).toMatch(TU);
    expect(res.headers.location).toBe(`/v1/wallet/top-ups/${id}`);
    expect(res.body).toEqual({
      top_up: {
        id, status: 'pending', amount: '25.50000', currency: 'USD', provider: p.name, checkout_url: expect.stringMatching(p.checkoutUrl),
        return_url: 'https://console.example.com/billing?tab=1', created_at: expect.stringMatching(ISO), expires_at: expect.stringMatching(ISO),
        updated_at: res.body.top_up.created_at, paid_at: null, failure_reason: null, refunded_amount: '0.00000',
      },
    });
    expect(Date.parse(res.body.top_up.expires_at) - Date.parse(res.body.top_up.created_at)).toBe(30 * 60 * 1000);
    const got = await t.http.get(`/v1/wallet/top-ups/${id}`).set(rw);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body.top_up);
    expect(await credits(id)).toEqual([]);
    const audit = await t.sql(`SELECT action, actor_type, target_type, target_id, data FROM audit_log WHERE target_id = $1`, [id]);
    expect(audit).toEqual([{ action: 'wallet.top_up.create', actor_type: 'api_key', target_type: 'top_up', target_id: id, data: { amount: '25.50000', currency: 'USD' } }]);
    if (sim) await site().post(`${pathOf(res.body.top_up.checkout_url)}/cancel`).expect(303);
    else expect((await t.http.post(`/v1/wallet/top-ups/${id}/cancel`).set(rw)).status).toBe(200);
  });

  // The body's rules are checked before the provider is called: the simulated provider's run covers them.
  (sim ? describe : describe.skip)('400 naming the field, nothing written', () => {
    const cases: [string, unknown, string][] = [
      ['amount a JSON number', { amount: 25, currency: 'USD' }, 'amount'],
      ['amount a float', { amount: 25.5, currency: 'USD' }, 'amount'],
      ['amount missing', { currency: 'USD' }, 'amount'],
      ['USD below 5.00', { amount: '4.99', currency: 'USD' }, 'amount'],
      ['USD above 10000.00', { amount: '10000.01', currency: 'USD' }, 'amount'],
      ['USD a fraction of a cent', { amount: '25.505', currency: 'USD' }, 'amount'],
      ['USD six decimals', { amount: '25.500000', currency: 'USD' }, 'amount'],
      ['USD negative', { amount: '-25', currency: 'USD' }, 'amount'],
      ['USD exponent', { amount: '2.5e1', currency: 'USD' }, 'amount'],
      ['IDR fractional', { amount: '10000.5', currency: 'IDR' }, 'amount'],
      ['IDR below 10000', { amount: '9999', currency: 'IDR' }, 'amount'],
      ['IDR above 150000000', { amount: '150000001', currency: 'IDR' }, 'amount'],
      ['currency unknown', { amount: '25', currency: 'EUR' }, 'currency'],
      ['currency missing', { amount: '25' }, 'currency'],
      ['return_url http off localhost', { amount: '25', currency: 'USD', return_url: 'http://example.com/' }, 'return_url'],
      ['return_url relative', { amount: '25', currency: 'USD', return_url: '/billing' }, 'return_url'],
      ['return_url user info', { amount: '25', currency: 'USD', return_url: 'https://a:b@example.com/' }, 'return_url'],
      ['return_url too long', { amount: '25', currency: 'USD', return_url: `https://example.com/${'a'.repeat(2030)}` }, 'return_url'],
      ['return_url a number', { amount: '25', currency: 'USD', return_url: 5 }, 'return_url'],
      // Characters a Content-Security-Policy reads as syntax: the checkout page names return_url's origin in its form-action.
      ...['https://a.example;sandbox/', 'https://a.example,b.example/', 'https://*/', "https://a'b.example/"].map(
        (url) => [`return_url host ${url}`, { amount: '25', currency: 'USD', return_url: url }, 'return_url'] as [string, unknown, string],
      ),
      ['body an array', [1], 'body'],
    ];
    it.each(cases)('%s', async (_name, body, field) => {
      const before = await counts();
      const res = await create(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: { code: 'invalid_request', message: expect.any(String), request_id: res.headers['x-request-id'], details: { field } } });
      expect(await counts()).toBe(before);
    });
  });

  it.each([
    ['USD 5.00', '5.00', 'USD', '5.00000'],
    ['USD 10000.00000', '10000.00000', 'USD', '10000.00000'],
    ['IDR 10000', '10000', 'IDR', '10000'],
    ['IDR 150000000', '150000000', 'IDR', '150000000'],
    ['return_url http on localhost', '25', 'USD', '25.00000'],
  ])('accepts the bound %s', async (name, amount, currency, shown) => {
    const res = await create({ amount, currency, ...(name.includes('localhost') ? { return_url: 'http://127.0.0.1:8080/done' } : {}) }, bearer(apiToken('tq', 'bw')));
    expect(res.status).toBe(201);
    expect(res.body.top_up).toMatchObject({ amount: shown, currency, status: 'pending' });
    const cancel = await t.http.post(`/v1/wallet/top-ups/${res.body.top_up.id}/cancel`).set(bearer(apiToken('tq', 'bw')));
    expect(cancel.status).toBe(200);
  });

  const itSim = sim ? it : it.skip;

  itSim('access: billing:write creates; vm:write is 403; a developer session is 403; reads take vm:read', async () => {
    const vm = await create({ amount: '25', currency: 'USD' }, bearer(apiToken('tp', 'vm')));
    expect(vm.status).toBe(403);
    expect(vm.body.error.message).toContain('billing:write');
    const login = await t.http.post('/v1/auth/login').send({ email: 'dev@tp.test', password: OWNER_PASSWORD });
    const dev = await create({ amount: '25', currency: 'USD' }, bearer(login.body.token));
    expect(dev.status).toBe(403);
    expect((await t.http.get('/v1/wallet/top-ups').set(bearer(apiToken('tp', 'vm')))).status).toBe(200);
    expect((await t.http.get('/v1/wallet/top-ups').set(bearer(login.body.token))).status).toBe(200);
    expect((await t.http.post('/v1/wallet/top-ups').send({ amount: '25', currency: 'USD' })).status).toBe(401);
  });

  it('Pay at the checkout: the signed event credits the wallet (before the simulated page redirects); history shows the credit', async () => {
    const before = await balances();
    const res = await create({ amount: '20.00', currency: 'USD', return_url: 'https://console.example.com/billing?tab=1' });
    const id = res.body.top_up.id;
    if (!sim) await p.pay(res.body.top_up);
    else {
      const page = await site().get(pathOf(res.body.top_up.checkout_url));
      expect(page.status).toBe(200);
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(page.headers['cache-control']).toBe('no-store');
      expect(page.headers['content-security-policy']).toBe(
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' https://console.example.com; frame-ancestors 'none'; base-uri 'none'",
      );
      expect(page.text).not.toMatch(/<script/i);
      expect(page.text).toContain('<span id="amount" data-value="20.00000">$20.00</span>');
      expect(page.text).toContain(`<dd id="reference">${id}</dd>`);
      expect(page.text).toContain('<span id="currency">USD</span>');
      expect(page.text).toContain('<span id="status">open</span>');
      expect(page.text).toContain('id="pay"');
      // A form posted from another site (its Origin) is refused before the session is touched.
      const foreign = await site().post(`${pathOf(res.body.top_up.checkout_url)}/pay`).set('Origin', 'https://evil.example');
      expect(foreign.status).toBe(403);
      expect(foreign.text).toContain('<h1>Forbidden</h1>');
      // An opaque origin (a sandboxed frame elsewhere), or a browser saying the post is cross-site, likewise.
      const pay = () => site().post(`${pathOf(res.body.top_up.checkout_url)}/pay`).set('Host', 'checkout.test:8080');
      expect((await pay().set('Origin', 'null')).status).toBe(403);
      expect((await pay().set('Origin', 'null').set('Sec-Fetch-Site', 'cross-site')).status).toBe(403);
      expect((await pay().set('Origin', 'http://checkout.test:8080').set('Sec-Fetch-Site', 'same-site')).status).toBe(403);
      expect((await t.http.get(`/v1/wallet/top-ups/${id}`).set(rw)).body.status).toBe('pending');
      // Its own page's form: the Origin is the site's own (a browser under the page's no-referrer policy sends `null` with Sec-Fetch-Site same-origin; see the browser test).
      const paid = await site().post(`${pathOf(res.body.top_up.checkout_url)}/pay`).set('Host', 'checkout.test:8080').set('Origin', 'http://checkout.test:8080');
      expect(paid.status).toBe(303);
      expect(paid.headers.location).toBe(`https://console.example.com/billing?tab=1&top_up_id=${id}&checkout=paid`);
    }
    const after = await t.http.get(`/v1/wallet/top-ups/${id}`).set(rw);
    expect(after.body).toMatchObject({ status: 'succeeded', checkout_url: null, paid_at: expect.stringMatching(ISO), failure_reason: null });
    const usd = (rows: { currency: string; available: string; reserved: string }[]) => rows.find((b) => b.currency === 'USD')!;
    expect(usd(await balances())).toEqual({ ...usd(before), available: String(BigInt(usd(before).available) + 2_000_000n) });
    expect(await credits(id)).toEqual([{ amount: '2000000', currency: 'USD', org_id: 'org_tp' }]);
    const history = await t.http.get(`/v1/wallet/transactions?top_up_id=${id}`).set(rw);
    expect(history.body.transactions).toEqual([
      expect.objectContaining({ type: 'credit', amount: '20.00000', source: 'top_up', top_up_id: id, operation_id: null, available_after: '30.00000', reserved_after: '0.00000' }),
    ]);
    const audit = await t.sql(`SELECT action, actor_type, data FROM audit_log WHERE target_id = $1 ORDER BY seq`, [id]);
    expect(audit[1]).toEqual({
      action: 'wallet.top_up.succeeded', actor_type: 'system',
      data: { amount: '20.00000', currency: 'USD', provider: p.name, provider_event_id: expect.stringMatching(sim ? /^evt_sim_/ : /^evt_1/), late: false, from: 'pending' },
    });
    if (sim) {
      const again = await site().post(`${pathOf(res.body.top_up.checkout_url)}/pay`);
      expect(again.status).toBe(409);
      const shown = await site().get(pathOf(res.body.top_up.checkout_url));
      expect(shown.text).toContain('<span id="status">paid</span>');
      expect(shown.text).not.toContain('id="pay"');
    }
    await expectVerified(t);
  });

  itSim('Cancel on the checkout page: canceled (actor system, via checkout), nothing credited; without return_url 200 "Payment canceled"', async () => {
    const res = await create({ amount: '150000', currency: 'IDR' });
    const id = res.body.top_up.id;
    const canceled = await site().post(`${pathOf(res.body.top_up.checkout_url)}/cancel`);
    expect(canceled.status).toBe(200);
    expect(canceled.text).toContain('<h1 id="title" class="warn">Payment canceled</h1>');
    expect(canceled.text).toContain('<span id="amount" data-value="150000">Rp 150.000</span>');
    expect(canceled.text).toContain('Nothing was charged. To add funds, start a new top-up');
    expect((await t.http.get(`/v1/wallet/top-ups/${id}`).set(rw)).body).toMatchObject({ status: 'canceled', checkout_url: null, paid_at: null });
    expect(await credits(id)).toEqual([]);
    expect(await t.sql(`SELECT action, actor_type, data FROM audit_log WHERE target_id = $1 ORDER BY seq`, [id])).toEqual([
      { action: 'wallet.top_up.create', actor_type: 'api_key', data: { amount: '150000', currency: 'IDR' } },
      { action: 'wallet.top_up.cancel', actor_type: 'system', data: { via: 'checkout' } },
    ]);
  });

  it('POST cancel: 200 {top_up} canceled, audited via api; again 409 invalid_state {status}; unknown 404; the page then shows canceled', async () => {
    const res = await create({ amount: '30', currency: 'USD' });
    const id = res.body.top_up.id;
    const cancel = await t.http.post(`/v1/wallet/top-ups/${id}/cancel`).set(rw);
    expect(cancel.status).toBe(200);
    expect(cancel.body).toEqual({ top_up: { ...res.body.top_up, status: 'canceled', checkout_url: null, updated_at: expect.stringMatching(ISO) } });
    const again = await t.http.post(`/v1/wallet/top-ups/${id}/cancel`).set(rw);
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ error: { code: 'invalid_state', message: `Top-up ${id} is canceled; only a pending top-up can be canceled`, request_id: again.headers['x-request-id'], details: { status: 'canceled' } } });
    const unknown = await t.http.post('/v1/wallet/top-ups/tu_unknown/cancel').set(rw);
    expect(unknown.status).toBe(404);
    const other = await t.http.get(`/v1/wallet/top-ups/${id}`).set(bearer(apiToken('tq', 'bw')));
    expect(other.status).toBe(404);
    if (sim) {
      const page = await site().get(pathOf(res.body.top_up.checkout_url));
      expect(page.text).toContain('<span id="status">canceled</span>');
      expect(page.text).not.toContain('id="pay"');
    } else {
      expect(p.mock!.session(await sessionOf(id)).status).toBe('expired');
    }
    expect((await t.sql(`SELECT data FROM audit_log WHERE target_id = $1 AND action = 'wallet.top_up.cancel'`, [id]))[0]).toEqual({ data: { via: 'api' } });
  });

  it('POST cancel with the provider unreachable: 503 funding_unavailable, the top-up still pending, nothing audited', async () => {
    const res = await create({ amount: '31', currency: 'USD' });
    const id = res.body.top_up.id;
    p.down(true);
    try {
      const cancel = await t.http.post(`/v1/wallet/top-ups/${id}/cancel`).set(rw);
      expect(cancel.status).toBe(503);
      expect(cancel.body).toEqual({ error: { code: 'funding_unavailable', message: expect.any(String), request_id: cancel.headers['x-request-id'], details: {} } });
    } finally {
      p.down(false);
    }
    expect((await t.http.get(`/v1/wallet/top-ups/${id}`).set(rw)).body.status).toBe('pending');
    expect(await t.sql(`SELECT action FROM audit_log WHERE target_id = $1`, [id])).toEqual([{ action: 'wallet.top_up.create' }]);
    expect((await t.http.post(`/v1/wallet/top-ups/${id}/cancel`).set(rw)).status).toBe(200);
  });

  it('POST cancel after the customer paid at the checkout but before its event arrived: 409 invalid_state; the event then credits it', async () => {
    const res = await create({ amount: '32', currency: 'USD' });
    const id = res.body.top_up.id;
    await p.markPaid(id);
    const cancel = await t.http.post(`/v1/wallet/top-ups/${id}/cancel`).set(rw);
    expect(cancel.status).toBe(409);
    expect(cancel.body.error).toMatchObject({ code: 'invalid_state', details: { status: 'pending' } });
    expect((await t.http.get(`/v1/wallet/top-ups/${id}`).set(rw)).body.status).toBe('pending');
    const body = sessionEvent('checkout.session.completed', { id: await sessionOf(id), topUpId: id, amountTotal: 3200, currency: 'usd' });
    expect((await post(body, signature(body))).status).toBe(200);
    expect((await t.http.get(`/v1/wallet/top-ups/${id}`).set(rw)).body.status).toBe('succeeded');
  });

  it('the pending limit: the 6th is 409 quota_exceeded {limit: 5} (stored under a key), no session opened', async () => {
    const headers = bearer(apiToken('tl', 'bw'));
    for (let i = 0; i < 5; i++) expect((await create({ amount: '10', currency: 'USD' }, headers)).status).toBe(201);
    const sessions = await p.sessions();
    const sixth = await create({ amount: '10', currency: 'USD' }, { ...headers, 'Idempotency-Key': 'six' });
    expect(sixth.status).toBe(409);
    expect(sixth.body).toEqual({ error: { code: 'quota_exceeded', message: expect.any(String), request_id: sixth.headers['x-request-id'], details: { limit: 5 } } });
    expect(await p.sessions()).toBe(sessions);
    const replay = await create({ amount: '10', currency: 'USD' }, { ...headers, 'Idempotency-Key': 'six' });
    expect(replay.status).toBe(409);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    const list = await t.http.get('/v1/wallet/top-ups?status=pending&limit=2').set(headers);
    expect(list.body.top_ups).toHaveLength(2);
    expect(list.body.next_cursor).toEqual(expect.any(String));
    const rest = await t.http.get(`/v1/wallet/top-ups?status=pending&limit=100&cursor=${list.body.next_cursor}`).set(headers);
    expect(rest.body.top_ups).toHaveLength(3);
    expect((await t.http.get('/v1/wallet/top-ups?status=open').set(headers)).status).toBe(400);
    expect((await t.http.get('/v1/wallet/top-ups?currency=IDR').set(headers)).body).toEqual({ top_ups: [], next_cursor: null });
  });

  it('Idempotency-Key: the replay is the same 201, one top-up; another body 409 idempotency_conflict', async () => {
    const headers = { ...bearer(apiToken('tq', 'bw')), 'Idempotency-Key': 'tq-1' };
    const first = await create({ amount: '12', currency: 'USD' }, headers);
    const second = await create({ amount: '12', currency: 'USD' }, headers);
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.text).toBe(first.text);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(await t.sql(`SELECT count(*)::int AS n FROM top_ups WHERE id = $1`, [first.body.top_up.id])).toEqual([{ n: 1 }]);
    const conflict = await create({ amount: '13', currency: 'USD' }, headers);
    expect(conflict.status).toBe(409);
    expect(conflict.body.error.code).toBe('idempotency_conflict');
  });

  describe(`POST /v1/payment-events/${p.name}`, () => {
    let topUp: { id: string; sessionId: string };
    beforeAll(async () => {
      const res = await create({ amount: '40', currency: 'USD' }, bearer(apiToken('tq', 'bw')));
      topUp = { id: res.body.top_up.id, sessionId: await sessionOf(res.body.top_up.id) };
    });
    const paidBody = (eventId?: string) => sessionEvent('checkout.session.completed', { id: topUp.sessionId, topUpId: topUp.id, amountTotal: 4000, currency: 'usd' }, eventId);

    it('a forged or stale signature: 400 naming Stripe-Signature, nothing recorded', async () => {
      const body = paidBody();
      const before = await counts();
      for (const sig of [undefined, signature(body, undefined, 'whsec_forged'), signature(body, Math.floor(Date.now() / 1000) - 301), signature(body + ' ')]) {
        const res = await post(body, sig);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ error: { code: 'invalid_request', message: expect.any(String), request_id: res.headers['x-request-id'], details: { field: 'Stripe-Signature' } } });
      }
      expect(await counts()).toBe(before);
      expect(await credits(topUp.id)).toEqual([]);
    });

    it('404 for a provider that is not configured; 400 naming a missing or mistyped member', async () => {
      const body = paidBody();
      expect((await post(body, signature(body), p.other)).status).toBe(404);
      const noAmount = JSON.stringify({ ...JSON.parse(body), data: { object: { ...JSON.parse(body).data.object, amount_total: '4000' } } });
      const res = await post(noAmount, signature(noAmount));
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual({ field: 'data.object.amount_total' });
      const noId = JSON.stringify({ type: 'checkout.session.completed' });
      expect((await post(noId, signature(noId))).body.error.details).toEqual({ field: 'id' });
    });

    it('a body over 256 KiB: 413 before its signature is read, nothing recorded', async () => {
      const before = await counts();
      const huge = JSON.stringify({ id: 'evt_sim_huge', type: 'x', pad: 'a'.repeat(300 * 1024) });
      const res = await post(huge, signature(huge));
      expect(res.status).toBe(413);
      expect(res.body).toEqual({ error: { code: 'invalid_request', message: 'Request body is larger than 256 KiB', request_id: res.headers['x-request-id'], details: {} } });
      expect(await counts()).toBe(before);
    });

    it('Content-Length: 99999999: 413 at once, before a byte of the body is sent (nothing drained, nothing recorded)', async () => {
      const before = await counts();
      const raw = await headOnly(
        t.app.getHttpServer() as Server,
        `POST /v1/payment-events/${p.name} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nStripe-Signature: t=1,v1=00\r\nContent-Length: 99999999\r\n\r\n`,
        '{"id":"evt_',
      );
      expect(rawStatusOf(raw)).toBe(413);
      expect(raw).toMatch(/\r\nconnection: close\r\n/i);
      expect(rawBodyOf(raw)).toEqual({ error: { code: 'invalid_request', message: 'Request body is larger than 256 KiB', request_id: rawRequestIdOf(raw), details: {} } });
      expect(await counts()).toBe(before);
    });

    it('the same paid event 5 times at once credits once; each answers 200 {received: true}', async () => {
      const body = paidBody();
      const answers = await Promise.all(Array.from({ length: 5 }, () => post(body, signature(body))));
      expect(answers.map((a) => [a.status, a.body])).toEqual(Array.from({ length: 5 }, () => [200, { received: true }]));
      expect(await credits(topUp.id)).toEqual([{ amount: '4000000', currency: 'USD', org_id: 'org_tq' }]);
      const other = paidBody();
      expect((await post(other, signature(other))).status).toBe(200);
      expect(await credits(topUp.id)).toHaveLength(1);
      expect(await t.sql(`SELECT outcome FROM payment_events WHERE top_up_id = $1 ORDER BY received_at`, [topUp.id])).toEqual([{ outcome: 'applied' }, { outcome: 'no_change' }]);
    });

    it('expired arriving before completed still credits (late: true, from: expired)', async () => {
      const res = await create({ amount: '15000', currency: 'IDR' }, bearer(apiToken('tq', 'bw')));
      const id = res.body.top_up.id;
      const session = { id: await sessionOf(id), topUpId: id, amountTotal: 1_500_000, currency: 'idr' };
      const expired = sessionEvent('checkout.session.expired', { ...session, paymentStatus: 'unpaid' });
      expect((await post(expired, signature(expired))).status).toBe(200);
      expect((await t.http.get(`/v1/wallet/top-ups/${id}`).set(bearer(apiToken('tq', 'bw')))).body.status).toBe('expired');
      const paid = sessionEvent('checkout.session.completed', session);
      expect((await post(paid, signature(paid))).status).toBe(200);
      expect((await t.http.get(`/v1/wallet/top-ups/${id}`).set(bearer(apiToken('tq', 'bw')))).body).toMatchObject({ status: 'succeeded', failure_reason: null });
      expect(await credits(id)).toEqual([{ amount: '15000', currency: 'IDR', org_id: 'org_tq' }]);
      expect((await t.sql(`SELECT data FROM audit_log WHERE target_id = $1 AND action = 'wallet.top_up.succeeded'`, [id]))[0].data).toMatchObject({ late: true, from: 'expired' });
    });

    it('async_payment_failed → failed with the provider code; an unknown top-up or a different amount is unmatched, never credited', async () => {
      const res = await create({ amount: '16', currency: 'USD' }, bearer(apiToken('tq', 'bw')));
      const id = res.body.top_up.id;
      const session = { id: await sessionOf(id), topUpId: id, amountTotal: 1600, currency: 'usd' };
      const wrongAmount = sessionEvent('checkout.session.completed', { ...session, amountTotal: 1700 });
      expect((await post(wrongAmount, signature(wrongAmount))).status).toBe(200);
      const unknown = sessionEvent('checkout.session.completed', { ...session, topUpId: 'tu_nobody' });
      expect((await post(unknown, signature(unknown))).status).toBe(200);
      expect(await credits(id)).toEqual([]);
      const failed = sessionEvent('checkout.session.async_payment_failed', { ...session, failureCode: 'card_declined' });
      expect((await post(failed, signature(failed))).status).toBe(200);
      expect((await t.http.get(`/v1/wallet/top-ups/${id}`).set(bearer(apiToken('tq', 'bw')))).body).toMatchObject({ status: 'failed', failure_reason: p.failureReason('card_declined') });
      const outcomes = await t.sql(`SELECT outcome FROM payment_events WHERE event_id IN ($1, $2, $3) ORDER BY received_at`, [
        JSON.parse(wrongAmount).id, JSON.parse(unknown).id, JSON.parse(failed).id,
      ]);
      expect(outcomes).toEqual([{ outcome: 'unmatched' }, { outcome: 'unmatched' }, { outcome: 'applied' }]);
      await expectVerified(t);
    });
  });

  it('expiry: a pending top-up past expires_at becomes expired (not audited); the page shows expired and no button', async () => {
    const res = await create({ amount: '17', currency: 'USD' }, bearer(apiToken('tq', 'bw')));
    const id = res.body.top_up.id;
    await p.expire(id);
    expect(await t.app.get(ExpireTopUps).runOnce()).toBe(1);
    expect((await t.http.get(`/v1/wallet/top-ups/${id}`).set(bearer(apiToken('tq', 'bw')))).body).toMatchObject({ status: 'expired', checkout_url: null });
    expect(await t.sql(`SELECT action FROM audit_log WHERE target_id = $1`, [id])).toEqual([{ action: 'wallet.top_up.create' }]);
    if (!sim) return;
    const page = await site().get(pathOf(res.body.top_up.checkout_url));
    expect(page.text).toContain('<span id="status">expired</span>');
    expect(page.text).not.toContain('<button');
    expect((await site().post(`${pathOf(res.body.top_up.checkout_url)}/pay`)).status).toBe(409);
  });

  it('metrics: pending top-ups by currency, ended top-ups by status, payment events by outcome', async () => {
    const res = await fetch(`http://127.0.0.1:${t.app.get(MetricsServer).port()}/metrics`);
    const lines = (await res.text()).split('\n');
    const [{ usd, idr }] = await t.sql<{ usd: number; idr: number }>(
      `SELECT count(*) FILTER (WHERE currency = 'USD' AND status = 'pending')::int AS usd, count(*) FILTER (WHERE currency = 'IDR' AND status = 'pending')::int AS idr FROM top_ups`,
    );
    expect(lines).toEqual(expect.arrayContaining([`cds_top_ups_pending{currency="USD"} ${usd}`, `cds_top_ups_pending{currency="IDR"} ${idr}`]));
    const value = (prefix: string) => Number(lines.find((l) => l.startsWith(prefix))?.split(' ')[1] ?? 'NaN');
    expect(value(`cds_payment_events_total{provider="${p.name}",outcome="bad_signature"}`)).toBeGreaterThanOrEqual(4);
    expect(value(`cds_payment_events_total{provider="${p.name}",outcome="unmatched"}`)).toBe(2);
    expect(value(`cds_payment_events_total{provider="${p.name}",outcome="duplicate"}`)).toBeGreaterThanOrEqual(4);
    expect(value(`cds_payment_events_total{provider="${p.name}",outcome="bad_body"}`)).toBe(2);
    expect(value('cds_top_ups_ended_total{currency="USD",status="succeeded"}')).toBe(3);
    expect(value('cds_top_ups_ended_total{currency="USD",status="failed"}')).toBe(1);
  });

  itSim('the checkout site: an unknown session is 404 on every route', async () => {
    expect((await site().get('/checkout/cs_sim_unknown')).status).toBe(404);
    expect((await site().post('/checkout/cs_sim_unknown/pay')).status).toBe(404);
    expect((await site().post('/checkout/cs_sim_unknown/cancel')).status).toBe(404);
  });
});

describe('wallet top-ups with the provider down or off', () => {
  it('PAYMENT_PROVIDER_DOWN: 503 funding_unavailable, nothing written; the page 503', async () => {
    const t = await startTestApp({ paymentProviderDown: true, paymentProviderWebhookSecret: PAYMENT_SECRET });
    try {
      await t.seed({ regions: [region()], organizations: [{ ...organization('dn'), api_keys: [{ name: 'b', scopes: ['billing:write'], token: apiToken('dn', 'bw') }] }] });
      const res = await t.http.post('/v1/wallet/top-ups').set(bearer(apiToken('dn', 'bw'))).set('Idempotency-Key', 'k').send({ amount: '25', currency: 'USD' });
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ error: { code: 'funding_unavailable', message: expect.any(String), request_id: res.headers['x-request-id'], details: {} } });
      expect(await t.sql(`SELECT (SELECT count(*) FROM top_ups)::int AS t, (SELECT count(*) FROM sim_checkout_sessions)::int AS s, (SELECT count(*) FROM idempotency_records)::int AS i`)).toEqual([{ t: 0, s: 0, i: 0 }]);
      expect((await request(t.app.getHttpServer()).get('/checkout/cs_sim_x')).status).toBe(503);
    } finally {
      await t.close();
    }
  });

  it('PAYMENT_PROVIDER=off: 503 on create; the checkout site and the callback 404', async () => {
    const t = await startTestApp({ paymentProvider: 'off' });
    try {
      await t.seed({ regions: [region()], organizations: [{ ...organization('of'), api_keys: [{ name: 'b', scopes: ['billing:write'], token: apiToken('of', 'bw') }] }] });
      const res = await t.http.post('/v1/wallet/top-ups').set(bearer(apiToken('of', 'bw'))).send({ amount: '25', currency: 'USD' });
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe('funding_unavailable');
      expect((await request(t.app.getHttpServer()).get('/checkout/cs_sim_x')).status).toBe(404);
      const cb = await t.http.post('/v1/payment-events/simulated').set('Content-Type', 'application/json').send('{}');
      expect(cb.status).toBe(404);
    } finally {
      await t.close();
    }
  });
});
