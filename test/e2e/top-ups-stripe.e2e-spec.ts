import request from 'supertest';
import { ExpireTopUps } from '../../src/modules/funding/application/top-ups.use-cases';
import { STRIPE_API_VERSION } from '../../src/modules/funding/infrastructure/stripe-payment-gateway';
import { stripeSignatureHeader } from '../../src/modules/funding/domain/stripe-signature';
import { apiToken, bearer, organization, region } from '../support/fixtures';
import { stripeProvider } from '../support/payment-providers';
import { STRIPE_SECRET_KEY, STRIPE_WEBHOOK_SECRET, ScriptedAnswer, StripeMock, StripeRequest } from '../support/stripe-mock';
import { TestApp, startTestApp } from '../support/test-app';
import { expectVerified } from '../support/verify';

/**
 * The Stripe adapter, request by request, against a local Stripe (test/support/stripe-mock.ts):
 * what each top-up call sends (path, form parameters, the amount in Stripe's smallest unit, the
 * Idempotency-Key, the API version), what Stripe's error answers become (503 funding_unavailable,
 * nothing written), the SDK's retries under one idempotency key, cancel and the expiry sweep,
 * events as Stripe signs them. The stories every provider shares run in top-ups.e2e-spec.ts.
 */
describe('wallet top-ups through Stripe Checkout', () => {
  const p = stripeProvider();
  let t: TestApp;
  let mock: StripeMock;
  const key = bearer(apiToken('sp', 'bw'));

  beforeAll(async () => {
    t = await startTestApp({ ...(await p.start()), publicBaseUrl: 'https://cloud.example.com' });
    p.attach(t);
    mock = p.mock;
    const org = (suffix: string) => ({ ...organization(suffix), api_keys: [{ name: 'b', scopes: ['billing:write'], token: apiToken(suffix, 'bw') }] });
    await t.seed({ regions: [region()], organizations: [org('sp'), org('sq')] });
  });
  afterAll(async () => {
    await t?.close();
    await p.close();
  });

  const create = (body: object, headers: Record<string, string> = {}) => t.http.post('/v1/wallet/top-ups').set(key).set(headers).send(body);
  const sessionOf = async (topUpId: string) => (await t.sql<{ session_id: string }>(`SELECT session_id FROM top_ups WHERE id = $1`, [topUpId]))[0].session_id;
  const deliver = (body: string, sig = mock.sign(body)) => t.http.post('/v1/payment-events/stripe').set('Content-Type', 'application/json').set('Stripe-Signature', sig).send(body);
  const credits = (topUpId: string) => t.sql(`SELECT amount::text, currency, org_id FROM wallet_ledger WHERE top_up_id = $1`, [topUpId]);
  const written = async () =>
    (await t.sql<{ n: string }>(`SELECT (SELECT count(*) FROM top_ups) || '/' || (SELECT count(*) FROM audit_log) || '/' || (SELECT count(*) FROM idempotency_records) AS n`))[0].n;
  const base = () => 'https://cloud.example.com';
  /** What every request of the SDK carries. */
  const expectStripeHeaders = (r: StripeRequest) => {
    expect(r.headers.authorization).toBe(`Bearer ${STRIPE_SECRET_KEY}`);
    expect(r.headers['stripe-version']).toBe(STRIPE_API_VERSION);
    expect(r.headers['user-agent']).toMatch(/^Stripe\/v1 NodeBindings\/23\.1\.0 Cloud Disk Service/);
  };

  it('POST /v1/wallet/top-ups {25.00 USD}: one POST /v1/checkout/sessions, form-encoded as Stripe reads it; checkout_url is the session url', async () => {
    const from = mock.requests.length;
    const res = await create({ amount: '25.00', currency: 'USD' });
    expect(res.status).toBe(201);
    const id: string = res.body.top_up.id;
    const sent = mock.since(from);
    expect(sent.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /v1/checkout/sessions']);
    const [r] = sent;
    expectStripeHeaders(r);
    expect(r.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(r.headers['idempotency-key']).toBe(`top-up-${id}-checkout`);
    const createdS = Date.parse(res.body.top_up.created_at) / 1000;
    expect(r.form).toEqual({
      mode: 'payment',
      'line_items[0][quantity]': '1',
      'line_items[0][price_data][currency]': 'usd',
      'line_items[0][price_data][unit_amount]': '2500',
      'line_items[0][price_data][product_data][name]': 'Wallet top-up',
      client_reference_id: id,
      'metadata[top_up_id]': id,
      'metadata[org_id]': 'org_sp',
      'payment_intent_data[metadata][top_up_id]': id,
      'payment_intent_data[metadata][org_id]': 'org_sp',
      success_url: `${base()}/checkout/complete?top_up_id=${id}&checkout=paid`,
      cancel_url: `${base()}/checkout/complete?top_up_id=${id}&checkout=canceled`,
      expires_at: expect.stringMatching(/^\d+$/),
    });
    // Stripe's minimum (30 min from its creation) and a minute's room: the top-up itself expires at 30 min, when the sweep closes the session.
    expect(Number(r.form.expires_at) - Math.floor(createdS)).toBeGreaterThanOrEqual(1860);
    expect(Number(r.form.expires_at) - Math.floor(createdS)).toBeLessThanOrEqual(1862);
    const session = mock.session(await sessionOf(id));
    expect(res.body.top_up).toMatchObject({ provider: 'stripe', status: 'pending', amount: '25.00000', currency: 'USD', checkout_url: session.url, return_url: null });
    expect(session).toMatchObject({ client_reference_id: id, amount_total: 2500, currency: 'usd', metadata: { top_up_id: id, org_id: 'org_sp' } });
    // The page a customer without return_url lands on: it says what happened and reads nothing.
    const landed = await request(t.app.getHttpServer()).get(new URL(r.form.success_url).pathname + new URL(r.form.success_url).search);
    expect([landed.status, landed.headers['content-type'], landed.text.includes('<h1>Payment received</h1>')]).toEqual([200, 'text/html; charset=utf-8', true]);
    expect(landed.headers['content-security-policy']).toContain("default-src 'none'");
    const back = await request(t.app.getHttpServer()).get(`/checkout/complete?top_up_id=${id}&checkout=canceled`);
    expect([back.status, back.text.includes('<h1>Payment not completed</h1>')]).toEqual([200, true]);
    expect((await request(t.app.getHttpServer()).get('/checkout/complete?checkout=other')).status).toBe(404);
    expect((await request(t.app.getHttpServer()).get(`/checkout/${session.id}`)).status).toBe(404);
  });

  it('IDR ×100 as Stripe counts rupiah; return_url leads back from both of Stripe\'s URLs; a keyed replay sends nothing to Stripe', async () => {
    const from = mock.requests.length;
    const headers = { 'Idempotency-Key': 'idr-1' };
    const res = await create({ amount: '150000000', currency: 'IDR', return_url: 'https://console.example.com/billing?tab=2' }, headers);
    expect(res.status).toBe(201);
    const id = res.body.top_up.id;
    const [r] = mock.since(from);
    expect(r.form).toMatchObject({
      'line_items[0][price_data][currency]': 'idr',
      'line_items[0][price_data][unit_amount]': '15000000000',
      success_url: `https://console.example.com/billing?tab=2&top_up_id=${id}&checkout=paid`,
      cancel_url: `https://console.example.com/billing?tab=2&top_up_id=${id}&checkout=canceled`,
    });
    const replay = await create({ amount: '150000000', currency: 'IDR', return_url: 'https://console.example.com/billing?tab=2' }, headers);
    expect([replay.status, replay.text, replay.headers['idempotent-replayed']]).toEqual([201, res.text, 'true']);
    expect(mock.since(from)).toHaveLength(1);
  });

  describe("Stripe's error answers: 503 funding_unavailable, nothing written", () => {
    const error = (status: number, type: string, code: string | undefined, message: string): ScriptedAnswer => ({ status, error: { type, ...(code ? { code } : {}), message } });
    const cases: [string, ScriptedAnswer[], number][] = [
      ['400 invalid_request_error (not retried)', [error(400, 'invalid_request_error', 'parameter_invalid_integer', 'Invalid integer: abc')], 1],
      ['401 a key Stripe refuses (not retried)', [error(401, 'invalid_request_error', undefined, 'Invalid API Key provided: sk_test_****0000')], 1],
      ['403 a restricted key without the permission (not retried)', [error(403, 'invalid_request_error', 'secret_key_required', 'The provided key does not have the required permissions')], 1],
      ['429 rate_limit (not retried)', [error(429, 'invalid_request_error', 'rate_limit', 'Too many requests hit the API too quickly.')], 1],
      ['500 api_error three times (the SDK retries twice)', [1, 2, 3].map(() => error(500, 'api_error', undefined, 'Sorry, something went wrong.')), 3],
      ['the answer lost three times (the SDK retries twice)', [1, 2, 3].map((): ScriptedAnswer => ({ drop: 'after_effect' })), 3],
    ];
    it.each(cases)('%s', async (_name, answers, attempts) => {
      const before = await written();
      const from = mock.requests.length;
      mock.answerNext(...answers);
      const res = await create({ amount: '30', currency: 'USD' }, { 'Idempotency-Key': `err-${attempts}-${answers[0] && 'status' in answers[0] ? answers[0].status : 'drop'}` });
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ error: { code: 'funding_unavailable', message: 'The hosted checkout is temporarily unavailable; try again later', request_id: res.headers['x-request-id'], details: {} } });
      const sent = mock.since(from);
      expect(sent.map((r) => `${r.method} ${r.path}`)).toEqual(Array(attempts).fill('POST /v1/checkout/sessions'));
      // Every attempt of one create carries the same key: Stripe opens at most one session for it.
      expect(new Set(sent.map((r) => r.headers['idempotency-key'])).size).toBe(1);
      expect(await written()).toBe(before);
      mock.clearScript();
    });

    it('500 twice, then Stripe answers: 201, three attempts under one key, one session', async () => {
      const sessions = mock.sessions.size;
      const from = mock.requests.length;
      mock.answerNext(error(500, 'api_error', undefined, 'Sorry'), error(500, 'api_error', undefined, 'Sorry'));
      const res = await create({ amount: '31', currency: 'USD' });
      expect(res.status).toBe(201);
      const sent = mock.since(from);
      expect(sent.map((r) => r.headers['idempotency-key'])).toEqual(Array(3).fill(`top-up-${res.body.top_up.id}-checkout`));
      expect(mock.sessions.size).toBe(sessions + 1);
      expect(res.body.top_up.checkout_url).toBe(mock.session(await sessionOf(res.body.top_up.id)).url);
    });

    it('the answer lost once after Stripe opened the session: the retry under the same key gets that session back, no second one', async () => {
      const sessions = mock.sessions.size;
      const from = mock.requests.length;
      mock.answerNext({ drop: 'after_effect' });
      const res = await create({ amount: '32', currency: 'USD' });
      expect(res.status).toBe(201);
      expect(mock.since(from)).toHaveLength(2);
      expect(mock.sessions.size).toBe(sessions + 1);
      expect(res.body.top_up.checkout_url).toBe(mock.session(await sessionOf(res.body.top_up.id)).url);
    });
  });

  it('a signed checkout.session.completed credits the wallet once: replayed, at once, and under another event id; signed by either library', async () => {
    const res = await create({ amount: '40.00', currency: 'USD' });
    const id = res.body.top_up.id;
    const session = mock.pay(await sessionOf(id));
    const body = mock.event('checkout.session.completed', session);
    const t0 = Math.floor(Date.now() / 1000);
    // Stripe's own signing (the SDK's test header) and this service's verifier's: both accepted.
    const answers = await Promise.all([deliver(body), deliver(body, stripeSignatureHeader(STRIPE_WEBHOOK_SECRET, t0, body)), deliver(body), deliver(body), deliver(body)]);
    expect(answers.map((a) => [a.status, a.body])).toEqual(Array(5).fill([200, { received: true }]));
    expect((await deliver(body)).status).toBe(200);
    expect((await deliver(mock.event('checkout.session.completed', session))).status).toBe(200);
    expect(await credits(id)).toEqual([{ amount: '4000000', currency: 'USD', org_id: 'org_sp' }]);
    expect(await t.sql(`SELECT outcome, count(*)::int AS n FROM payment_events WHERE top_up_id = $1 GROUP BY outcome ORDER BY outcome`, [id])).toEqual([
      { outcome: 'applied', n: 1 },
      { outcome: 'no_change', n: 1 },
    ]);
    expect((await t.http.get(`/v1/wallet/top-ups/${id}`).set(key)).body).toMatchObject({ status: 'succeeded', provider: 'stripe', checkout_url: null });
    // A forged signature and one more than 300 s ahead (which Stripe's library alone would take): 400, nothing recorded.
    const forged = await deliver(body, mock.sign(body, undefined, 'whsec_forged'));
    const ahead = await deliver(body, mock.sign(body, t0 + 400));
    expect([forged.status, forged.body.error.details, ahead.status]).toEqual([400, { field: 'Stripe-Signature' }, 400]);
    await expectVerified(t);
  });

  it("events of sessions this service did not open, and other types, are ignored with 200 (Stripe would retry a 400 for days)", async () => {
    const foreign = mock.event('checkout.session.completed', { id: 'cs_test_other', object: 'checkout.session', client_reference_id: null, amount_total: 999, currency: 'eur', payment_status: 'paid', status: 'complete' });
    const charge = mock.event('charge.succeeded', { id: 'ch_3Other', object: 'charge', amount: 999, currency: 'eur' });
    for (const body of [foreign, charge]) expect((await deliver(body)).body).toEqual({ received: true });
    expect(await t.sql(`SELECT type, outcome, top_up_id FROM payment_events WHERE event_id IN ($1, $2) ORDER BY type`, [JSON.parse(charge).id, JSON.parse(foreign).id])).toEqual([
      { type: 'charge.succeeded', outcome: 'ignored', top_up_id: null },
      { type: 'checkout.session.completed', outcome: 'ignored', top_up_id: null },
    ]);
  });

  it('cancel expires the session (POST …/expire); a session already paid is refused by Stripe, read back, and the cancel is 409', async () => {
    const open = (await create({ amount: '41', currency: 'USD' })).body.top_up;
    let from = mock.requests.length;
    const canceled = await t.http.post(`/v1/wallet/top-ups/${open.id}/cancel`).set(key);
    expect([canceled.status, canceled.body.top_up.status]).toEqual([200, 'canceled']);
    const sid = await sessionOf(open.id);
    expect(mock.since(from).map((r) => `${r.method} ${r.path}`)).toEqual([`POST /v1/checkout/sessions/${sid}/expire`]);
    expectStripeHeaders(mock.since(from)[0]);
    expect(mock.session(sid).status).toBe('expired');

    const paid = (await create({ amount: '42', currency: 'USD' })).body.top_up;
    const paidSid = await sessionOf(paid.id);
    mock.pay(paidSid);
    from = mock.requests.length;
    const refused = await t.http.post(`/v1/wallet/top-ups/${paid.id}/cancel`).set(key);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'invalid_state', details: { status: 'pending' } });
    expect(mock.since(from).map((r) => `${r.method} ${r.path}`)).toEqual([`POST /v1/checkout/sessions/${paidSid}/expire`, `GET /v1/checkout/sessions/${paidSid}`]);
    expect((await t.http.get(`/v1/wallet/top-ups/${paid.id}`).set(key)).body.status).toBe('pending');
  });

  it('the expiry sweep: retrieves each session; closes one still open; credits one paid whose event never came; expires one still processing', async () => {
    const topUp = async (amount: string) => (await t.http.post('/v1/wallet/top-ups').set(bearer(apiToken('sq', 'bw'))).send({ amount, currency: 'USD' })).body.top_up.id as string;
    const [open, paid, processing, gone] = [await topUp('43'), await topUp('44'), await topUp('45'), await topUp('46')];
    mock.pay(await sessionOf(paid));
    mock.pay(await sessionOf(processing), 'unpaid');
    mock.expire(await sessionOf(gone));
    await t.sql(`UPDATE top_ups SET expires_at = now() - interval '1 second' WHERE id = ANY($1)`, [[open, paid, processing, gone]]);
    const from = mock.requests.length;
    expect(await t.app.get(ExpireTopUps).runOnce()).toBe(4);
    const sids = Object.fromEntries(await Promise.all([open, paid, processing, gone].map(async (id) => [id, await sessionOf(id)])));
    expect(mock.since(from).map((r) => `${r.method} ${r.path}`).sort()).toEqual(
      [
        `GET /v1/checkout/sessions/${sids[open]}`,
        `POST /v1/checkout/sessions/${sids[open]}/expire`,
        `GET /v1/checkout/sessions/${sids[paid]}`,
        `GET /v1/checkout/sessions/${sids[processing]}`,
        `GET /v1/checkout/sessions/${sids[gone]}`,
      ].sort(),
    );
    const status = async (id: string) => (await t.http.get(`/v1/wallet/top-ups/${id}`).set(bearer(apiToken('sq', 'bw')))).body.status;
    expect([await status(open), await status(paid), await status(processing), await status(gone)]).toEqual(['expired', 'succeeded', 'expired', 'expired']);
    expect(mock.session(sids[open]).status).toBe('expired');
    expect(await credits(paid)).toEqual([{ amount: '4400000', currency: 'USD', org_id: 'org_sq' }]);
    expect((await t.sql(`SELECT data FROM audit_log WHERE target_id = $1 AND action = 'wallet.top_up.succeeded'`, [paid]))[0].data).toMatchObject({ provider: 'stripe', provider_event_id: null, late: false });
    // The bank debit settles later: its event credits the expired top-up (late).
    const settled = mock.pay(sids[processing], 'paid');
    expect((await deliver(mock.event('checkout.session.async_payment_succeeded', settled))).status).toBe(200);
    expect(await status(processing)).toBe('succeeded');
    expect(await credits(processing)).toEqual([{ amount: '4500000', currency: 'USD', org_id: 'org_sq' }]);
    await expectVerified(t);
  });
});
