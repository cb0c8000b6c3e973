import request from 'supertest';
import { adminApi, adminClient, answer as call } from '../support/admin-client';
import type { Client } from '../support/admin-client/generated/client';
import { adminServerOf } from '../../src/app.factory';
import { StaffAccounts } from '../../src/modules/admin/application/staff.use-cases';
import { SettlePendingRefunds } from '../../src/modules/funding/application/refund-top-up.use-cases';
import { VerifyInvariants } from '../../src/modules/verification/application/verify-invariants.use-case';
import { STRIPE_API_VERSION } from '../../src/modules/funding/infrastructure/stripe-payment-gateway';
import { apiToken, bearer, organization, region } from '../support/fixtures';
import { ProviderUnderTest, paymentProviders } from '../support/payment-providers';
import { PAYMENT_SECRET, signature } from '../support/payments';
import { STRIPE_SECRET_KEY } from '../support/stripe-mock';
import { TestApp, startTestApp } from '../support/test-app';
import { expectVerified } from '../support/verify';

/**
 * Refunds of top-ups by billing staff (admin.md "Money"), once per payment provider: the wallet
 * debited once at the refund (409 when available does not cover it, nothing written), the
 * provider asked afterwards, the top-up's refunded_amount and status, the customer's wallet
 * history and audit log, a replayed or repeated refund event changing nothing, a refusal giving
 * the debit back once, a lost answer settled from the provider's truth. On PostgreSQL: refunds
 * racing purchases on one wallet.
 */
describe.each(paymentProviders())('admin refunds of top-ups ($name)', (p: ProviderUnderTest) => {
  let t: TestApp;
  let admin: ReturnType<typeof request>;
  /** The generated admin client (the admin calls of this file go through it, but for what it cannot send). */
  let client: Client;
  const tokens: Record<string, string> = {};
  let keySeq = 0;
  const key = () => ({ 'Idempotency-Key': `rk-${++keySeq}` });
  const as = (role: string) => bearer(tokens[role]);
  const why = { 'X-Justification': 'TICKET-9' };
  const billingKey = (suffix: string) => bearer(apiToken(suffix, 'bw'));
  const org = (suffix: string, wallet = { USD: '0', IDR: '0' }) => ({
    ...organization(suffix, { wallet, servers: [], volumes: [] }),
    api_keys: [
      { name: 'b', scopes: ['billing:write', 'vm:write', 'audit:read', 'webhooks:write'], token: apiToken(suffix, 'bw') },
    ],
  });

  beforeAll(async () => {
    t = await startTestApp({ ...(await p.start()), adminPort: 1, webhookAllowPrivateUrls: true });
    p.attach(t);
    admin = request(adminServerOf(t.app)!);
    client = await adminClient(t);
    await t.seed({ regions: [region()], organizations: [org('ra'), org('rb'), org('rc'), org('rd')] });
    const accounts = t.app.get(StaffAccounts);
    for (const role of ['support', 'billing', 'operator']) tokens[role] = (await accounts.create({ email: `${role}@refunds.test`, name: `Staff ${role}`, role })).token;
  });
  afterAll(async () => {
    await t?.close();
    await p.close();
  });

  /** A top-up of the organization, paid at the provider and credited. */
  async function paidTopUp(suffix: string, amount: string, currency = 'USD'): Promise<{ id: string; session: string }> {
    const res = await t.http.post('/v1/wallet/top-ups').set(billingKey(suffix)).send({ amount, currency });
    expect(res.status).toBe(201);
    await p.pay(res.body.top_up);
    const [row] = await t.sql<{ status: string; session_id: string }>('SELECT status, session_id FROM top_ups WHERE id = $1', [res.body.top_up.id]);
    expect(row.status).toBe('succeeded');
    return { id: res.body.top_up.id, session: row.session_id };
  }
  const refund = (topUpId: string, body: object, role = 'billing', headers: Record<string, string> = { ...why, ...key() }) =>
    call(adminApi.refundTopUp({ client, path: { id: topUpId }, headers: { ...as(role), ...headers } as never, body: body as never }));
  const available = async (orgId: string, currency = 'USD') =>
    (await t.sql<{ available: string }>('SELECT available::text FROM wallet_balances WHERE org_id = $1 AND currency = $2', [orgId, currency]))[0]?.available ?? '0';
  const written = async () =>
    (
      await t.sql<{ n: string }>(
        `SELECT (SELECT count(*) FROM top_up_refunds) || '/' || (SELECT count(*) FROM wallet_ledger) || '/' || (SELECT count(*) FROM audit_log) || '/' || (SELECT count(*) FROM webhook_events) AS n`,
      )
    )[0].n;
  /** Delivers a refund event as the provider sends it: the simulated provider's own recorded event, or Stripe's charge.refunded. */
  async function refundEvent(topUp: { id: string; session: string }, eventId?: string): Promise<string> {
    if (p.name === 'simulated') {
      const [row] = await t.sql<{ body: string }>(`SELECT body FROM sim_payment_events WHERE session_id = $1 AND type = 'charge.refunded' ORDER BY created_at DESC LIMIT 1`, [topUp.session]);
      if (!eventId) return row.body;
      return JSON.stringify({ ...JSON.parse(row.body), id: eventId });
    }
    const pi = p.mock!.session(topUp.session).payment_intent as string;
    return p.mock!.event('charge.refunded', p.mock!.refundedCharge(pi), eventId);
  }
  const deliver = (body: string) =>
    t.http.post(`/v1/payment-events/${p.name}`).set('Content-Type', 'application/json').set('Stripe-Signature', p.name === 'simulated' ? signature(body, undefined, PAYMENT_SECRET) : p.mock!.sign(body)).send(body);

  it('is for billing staff only (support and operator 403), with X-Justification and an Idempotency-Key; a bad body is 400 naming the member', async () => {
    const topUp = await paidTopUp('ra', '30.00');
    const before = await written();
    for (const role of ['support', 'operator']) {
      const res = await refund(topUp.id, { reason: 'x' }, role);
      expect([role, res.status, res.body.error.code]).toEqual([role, 403, 'forbidden']);
    }
    const noWhy = await refund(topUp.id, { reason: 'x' }, 'billing', key());
    expect(noWhy.status).toBe(400);
    expect(noWhy.body.error.details).toEqual({ field: 'X-Justification' });
    const noKey = await refund(topUp.id, { reason: 'x' }, 'billing', why);
    expect(noKey.status).toBe(400);
    expect(noKey.body.error.details).toEqual({ field: 'Idempotency-Key' });
    for (const [body, field] of [
      [{}, 'reason'],
      [{ reason: '' }, 'reason'],
      [{ reason: 'x', amount: 5 }, 'amount'],
      [{ reason: 'x', amount: '0' }, 'amount'],
      [{ reason: 'x', amount: '1.005' }, 'amount'],
      [{ reason: 'x', extra: 1 }, 'extra'],
    ] as const) {
      const res = await refund(topUp.id, body);
      expect([JSON.stringify(body), res.status, res.body.error.details.field]).toEqual([JSON.stringify(body), 400, field]);
    }
    const unknown = await refund('tu_unknown000000000000000000', { reason: 'x' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('not_found');
    expect(await written()).toBe(before);
    expect(await available('org_ra')).toBe('3000000');
  });

  it('refunds part, then the rest: the wallet debited once each, the top-up partially_refunded then refunded, in the history and the audit log', async () => {
    const endpoint = await t.http.post('/v1/webhook-endpoints').set(billingKey('rb')).send({ url: 'http://127.0.0.1:9/hooks', events: ['wallet.top_up.refunded'] });
    expect(endpoint.status).toBe(201);
    const topUp = await paidTopUp('rb', '40.00');
    const sentBefore = p.mock?.requests.length ?? 0;
    const k = key();
    const part = await refund(topUp.id, { amount: '15.00', reason: 'Unused credit returned (SUP-1)' }, 'billing', { ...why, ...k });
    expect(part.status).toBe(201);
    const refundId: string = part.body.refund.id;
    expect(part.body).toEqual({
      refund: {
        id: expect.stringMatching(/^rfd_[A-Za-z0-9]{24}$/), top_up_id: topUp.id, organization_id: 'org_rb', amount: '15.00000', currency: 'USD', reason: 'Unused credit returned (SUP-1)',
        status: 'succeeded', provider: p.name, provider_refund_id: expect.stringMatching(p.name === 'simulated' ? /^re_sim_/ : /^re_3/), failure_reason: null,
        created_at: expect.any(String), updated_at: expect.any(String),
      },
      top_up: expect.objectContaining({ id: topUp.id, status: 'partially_refunded', amount: '40.00000', refunded_amount: '15.00000', paid_at: expect.any(String) }),
      transaction: {
        id: expect.stringMatching(/^wtx_/), type: 'refund', currency: 'USD', amount: '15.00000', available_after: '25.00000', reserved_after: '0.00000', source: null,
        operation_id: null, top_up_id: topUp.id, created_at: expect.any(String), direction: 'debit', reason: 'Unused credit returned (SUP-1)', refund_id: refundId,
        description: `Refund of top-up ${topUp.id}: Unused credit returned (SUP-1)`,
      },
    });
    if (p.mock) {
      // The adapter: the session's payment intent, then one refund on it, in cents, keyed by the refund id.
      const sent = p.mock.since(sentBefore);
      expect(sent.map((r) => `${r.method} ${r.path}`)).toEqual([`GET /v1/checkout/sessions/${topUp.session}`, 'POST /v1/refunds']);
      const r = sent[1];
      expect(r.headers.authorization).toBe(`Bearer ${STRIPE_SECRET_KEY}`);
      expect(r.headers['stripe-version']).toBe(STRIPE_API_VERSION);
      expect(r.headers['idempotency-key']).toBe(refundId);
      expect(r.form).toEqual({
        payment_intent: p.mock.session(topUp.session).payment_intent,
        amount: '1500',
        reason: 'requested_by_customer',
        'metadata[refund_id]': refundId,
        'metadata[top_up_id]': topUp.id,
        'metadata[org_id]': 'org_rb',
      });
    }
    // A retry of the request (same key) answers the same refund: nothing debited again, the provider not asked to refund again.
    const again = await refund(topUp.id, { amount: '15.00', reason: 'Unused credit returned (SUP-1)' }, 'billing', { ...why, ...k });
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(part.body);
    expect(await available('org_rb')).toBe('2500000');

    const tooMuch = await refund(topUp.id, { amount: '25.01', reason: 'more' });
    expect(tooMuch.status).toBe(409);
    expect(tooMuch.body.error).toEqual({ code: 'conflict', message: expect.stringContaining('more than the 25.00000 USD left'), details: { field: 'amount', refundable: '25.00000', currency: 'USD' }, request_id: expect.any(String) });

    const rest = await refund(topUp.id, { reason: 'Account closed' });
    expect(rest.status).toBe(201);
    expect(rest.body.refund).toMatchObject({ amount: '25.00000', status: 'succeeded' });
    expect(rest.body.top_up).toMatchObject({ status: 'refunded', refunded_amount: '40.00000' });
    expect(await available('org_rb')).toBe('0');
    const done = await refund(topUp.id, { reason: 'again' });
    expect(done.status).toBe(409);
    expect(done.body.error).toMatchObject({ code: 'invalid_state', details: { status: 'refunded' } });

    const customer = billingKey('rb');
    const shown = await t.http.get(`/v1/wallet/top-ups/${topUp.id}`).set(customer);
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({ status: 'refunded', refunded_amount: '40.00000' });
    const listed = await t.http.get('/v1/wallet/top-ups?status=refunded').set(customer);
    expect(listed.body.top_ups.map((x: { id: string }) => x.id)).toEqual([topUp.id]);
    const history = await t.http.get('/v1/wallet/transactions?type=refund').set(customer);
    expect(history.status).toBe(200);
    expect(history.body.transactions).toEqual([rest.body.transaction, part.body.transaction]);
    const ofTopUp = await t.http.get(`/v1/wallet/transactions?top_up_id=${topUp.id}`).set(customer);
    expect(ofTopUp.body.transactions.map((x: { type: string }) => x.type)).toEqual(['refund', 'refund', 'credit']);
    const log = await t.http.get('/v1/audit-log?action=wallet.top_up.refund').set(customer);
    expect(log.body.entries).toEqual([
      expect.objectContaining({ action: 'wallet.top_up.refund', actor: { type: 'staff', role: 'billing' }, target: { type: 'top_up', id: topUp.id }, data: { refund_id: rest.body.refund.id, amount: '25.00000', currency: 'USD', reason: 'Account closed', justification: 'TICKET-9' } }),
      expect.objectContaining({ action: 'wallet.top_up.refund', data: { refund_id: refundId, amount: '15.00000', currency: 'USD', reason: 'Unused credit returned (SUP-1)', justification: 'TICKET-9' } }),
    ]);
    const events = await t.sql<{ type: string; data: string }>(`SELECT type, (body::json->'data')::text AS data FROM webhook_events WHERE org_id = 'org_rb' ORDER BY created_at`);
    expect(events.map((e) => [e.type, JSON.parse(e.data).status, JSON.parse(e.data).refunded_amount])).toEqual([
      ['wallet.top_up.refunded', 'partially_refunded', '15.00000'],
      ['wallet.top_up.refunded', 'refunded', '40.00000'],
    ]);

    // The provider's refund event, delivered, replayed and re-sent under a new id: nothing changes.
    const before = await written();
    const body = await refundEvent(topUp);
    const first = await deliver(body);
    expect(first.status).toBe(200);
    expect((await deliver(body)).status).toBe(200);
    expect((await deliver(await refundEvent(topUp, `evt_resent_${p.name}_0000000001`))).status).toBe(200);
    expect(await written()).toBe(before);
    expect(await available('org_rb')).toBe('0');
    const outcomes = await t.sql<{ outcome: string }>(`SELECT outcome FROM payment_events WHERE type = 'charge.refunded' AND top_up_id = $1 ORDER BY received_at`, [topUp.id]);
    expect(outcomes.map((o) => o.outcome)).toEqual(['no_change', 'no_change']);
    await expectVerified(t);
  });

  it('a refund larger than available is 409 conflict and writes nothing (the provider is not asked)', async () => {
    const topUp = await paidTopUp('rc', '20.00');
    const spend = await admin
      .post('/admin/v1/organizations/org_rc/wallet/adjustments')
      .set(as('billing'))
      .set(why)
      .set(key())
      .send({ currency: 'USD', amount: '15', direction: 'debit', reason: 'Spent elsewhere' });
    expect(spend.status).toBe(201);
    const before = await written();
    const sent = p.mock?.requests.length ?? 0;
    const res = await refund(topUp.id, { reason: 'Refund all' });
    expect(res.status).toBe(409);
    expect(res.body.error).toEqual({
      code: 'conflict', message: expect.stringContaining('larger than the available 5.00000 USD'), details: { field: 'amount', available: '5.00000', currency: 'USD' }, request_id: expect.any(String),
    });
    expect(await written()).toBe(before);
    expect(p.mock?.requests.length ?? 0).toBe(sent);
    const shown = await t.http.get(`/v1/wallet/top-ups/${topUp.id}`).set(billingKey('rc'));
    expect(shown.body).toMatchObject({ status: 'succeeded', refunded_amount: '0.00000' });
    const part = await refund(topUp.id, { amount: '5.00', reason: 'What is left' });
    expect(part.status).toBe(201);
    expect(await available('org_rc')).toBe('0');
  });

  it('a provider unreachable leaves the refund pending (debited); the sweep reads the provider first and settles it once', async () => {
    const topUp = await paidTopUp('rd', '10.00');
    p.down(true);
    const res = await refund(topUp.id, { amount: '4.00', reason: 'Provider down' });
    p.down(false);
    expect(res.status).toBe(201);
    expect(res.body.refund).toMatchObject({ status: 'pending', provider_refund_id: null });
    expect(res.body.top_up).toMatchObject({ status: 'partially_refunded', refunded_amount: '4.00000' });
    expect(await available('org_rd')).toBe('600000');
    const sent = p.mock?.requests.length ?? 0;
    await t.sql(`UPDATE top_up_refunds SET next_attempt_at = now() - interval '1 second' WHERE id = $1`, [res.body.refund.id]);
    expect(await t.app.get(SettlePendingRefunds).runOnce()).toBe(1);
    const [row] = await t.sql<{ status: string; provider_refund_id: string | null }>('SELECT status, provider_refund_id FROM top_up_refunds WHERE id = $1', [res.body.refund.id]);
    expect(row.status).toBe('succeeded');
    expect(row.provider_refund_id).toEqual(expect.any(String));
    if (p.mock) {
      // Stripe's truth first (the payment intent's refunds, matched on metadata), then the refund under the same key.
      expect(p.mock.since(sent).map((r) => `${r.method} ${r.path}`)).toEqual([
        `GET /v1/checkout/sessions/${topUp.session}`, 'GET /v1/refunds', `GET /v1/checkout/sessions/${topUp.session}`, 'POST /v1/refunds',
      ]);
      expect(p.mock.since(sent)[3].headers['idempotency-key']).toBe(res.body.refund.id);
      expect([...p.mock.refunds.values()].filter((r) => r.metadata.refund_id === res.body.refund.id)).toHaveLength(1);
    }
    // Nothing left to do: the sweep finds nothing; the debit stayed one.
    expect(await t.app.get(SettlePendingRefunds).runOnce()).toBe(0);
    expect(await t.sql('SELECT count(*)::int AS n FROM wallet_ledger WHERE refund_id = $1', [res.body.refund.id])).toEqual([{ n: 1 }]);
    expect(await available('org_rd')).toBe('600000');
    await expectVerified(t);
  });

  if (p.name === 'stripe') {
    it('Stripe: an answer lost after the refund was made is retried by the SDK under the same key: one refund at Stripe, one debit; a signed charge.refunded changes nothing', async () => {
      const topUp = await paidTopUp('rd', '10.00');
      const sent = p.mock!.requests.length;
      p.mock!.answerNext({ pass: true }, { drop: 'after_effect' });
      const res = await refund(topUp.id, { amount: '2.00', reason: 'Lost answer' });
      expect(res.status).toBe(201);
      expect(res.body.refund).toMatchObject({ status: 'succeeded', amount: '2.00000' });
      const posts = p.mock!.since(sent).filter((r) => r.path === '/v1/refunds');
      expect(posts.map((r) => [r.method, r.headers['idempotency-key'], r.form.amount])).toEqual([
        ['POST', res.body.refund.id, '200'],
        ['POST', res.body.refund.id, '200'],
      ]);
      expect([...p.mock!.refunds.values()].filter((r) => r.metadata.refund_id === res.body.refund.id)).toHaveLength(1);
      const before = await written();
      const event = await refundEvent(topUp);
      expect(JSON.parse(event).data.object.refunds.data[0]).toMatchObject({ id: res.body.refund.provider_refund_id, amount: 200, metadata: { refund_id: res.body.refund.id } });
      expect((await deliver(event)).status).toBe(200);
      expect((await deliver(event)).status).toBe(200);
      expect(await written()).toBe(before);
      expect(await t.sql('SELECT count(*)::int AS n FROM wallet_ledger WHERE refund_id = $1', [res.body.refund.id])).toEqual([{ n: 1 }]);
    });
  }

  it('a refund the provider refuses for good gives the debit back once, and the top-up its refundable amount', async () => {
    const topUp = await paidTopUp('rd', '10.00');
    // Stripe: the session is read (its payment intent), then the refund is refused.
    if (p.mock) p.mock.answerNext({ pass: true }, { status: 400, error: { type: 'invalid_request_error', code: 'charge_disputed', message: 'This charge is disputed.' } });
    // The simulated provider refuses more than what was paid: the session's refunds are made behind the service's back first.
    else await t.sql(`INSERT INTO sim_refunds (id, refund_id, session_id, currency, amount, status) VALUES ('re_sim_outside', 'rfd_outside', $1, 'USD', 800000, 'succeeded')`, [topUp.session]);
    const before = await available('org_rd');
    const res = await refund(topUp.id, { amount: '3.00', reason: 'Refused' });
    expect(res.status).toBe(201);
    const reason = p.mock ? 'charge_disputed' : 'amount_too_large';
    expect(res.body.refund).toMatchObject({ status: 'failed', failure_reason: reason, provider_refund_id: null });
    expect(res.body.top_up).toMatchObject({ status: 'succeeded', refunded_amount: '0.00000' });
    expect(await available('org_rd')).toBe(before);
    const history = await t.http.get('/v1/wallet/transactions?limit=2').set(billingKey('rd'));
    expect(history.body.transactions.map((x: { type: string; direction: string; amount: string; description: string }) => [x.type, x.direction, x.amount, x.description])).toEqual([
      ['adjustment', 'credit', '3.00000', `Credit by support: Refund of top-up ${topUp.id} not made by the payment provider (${reason}): the amount is back in the wallet`],
      ['refund', 'debit', '3.00000', `Refund of top-up ${topUp.id}: Refused`],
    ]);
    await expectVerified(t);
  });

  it('cli verify names a refund whose debit is of another amount, and a refunded total that is not the sum of the refunds', async () => {
    const [refunded] = await t.sql<{ id: string; refund_id: string }>(
      `SELECT r.top_up_id AS id, r.id AS refund_id FROM top_up_refunds r JOIN top_ups t ON t.id = r.top_up_id WHERE t.status = 'partially_refunded' AND r.status = 'succeeded' LIMIT 1`,
    );
    // The refund's record says more than its debit (the ledger is append-only): neither the debit nor the top-up's refunded total match it.
    await t.sql(`UPDATE top_up_refunds SET amount = amount + 1000 WHERE id = $1`, [refunded.refund_id]);
    const report = await t.app.get(VerifyInvariants).execute();
    const found = report.violations.filter((v) => v.check.startsWith('top_ups.refund')).map((v) => [v.check, v.subject]);
    expect(found).toEqual([
      ['top_ups.refunds_debited_once', refunded.refund_id],
      ['top_ups.refunded_within_amount', refunded.id],
    ]);
  });
});

/** PostgreSQL: refunds and purchases racing on one wallet. */
(process.env.DATABASE_URL ? describe : describe.skip)('refunds racing purchases on one wallet (PostgreSQL)', () => {
  let t: TestApp;
  /** The generated admin client. */
  let client: Client;
  let billing: string;
  const key = bearer(apiToken('rz', 'bw'));

  beforeAll(async () => {
    t = await startTestApp({ adminPort: 1, paymentProviderWebhookSecret: PAYMENT_SECRET });
    client = await adminClient(t);
    await t.seed({
      regions: [region()],
      organizations: [{ ...organization('rz', { wallet: { USD: '0', IDR: '0' }, servers: [], volumes: [] }), api_keys: [{ name: 'b', scopes: ['billing:write', 'vm:write'], token: apiToken('rz', 'bw') }] }],
    });
    billing = (await t.app.get(StaffAccounts).create({ email: 'billing@race.test', name: 'Billing', role: 'billing' })).token;
  });
  afterAll(async () => t?.close());

  it('20 concurrent refunds and purchases never take available below zero, and each refund is debited once', async () => {
    const topUps: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await t.http.post('/v1/wallet/top-ups').set(key).send({ amount: '10.00', currency: 'USD' });
      expect(res.status).toBe(201);
      const paid = await request(t.app.getHttpServer()).post(`${new URL(res.body.top_up.checkout_url).pathname}/pay`);
      expect([200, 303]).toContain(paid.status);
      topUps.push(res.body.top_up.id);
    }
    expect(await t.sql(`SELECT available::text FROM wallet_balances WHERE org_id = 'org_rz' AND currency = 'USD'`)).toEqual([{ available: '10000000' }]);
    // $100 available: 10 refunds of $10 and 10 purchases of $10 (500 GB premium for a month) at once.
    const answers = await Promise.all([
      ...topUps.map((id, i) =>
        call(adminApi.refundTopUp({ client, path: { id: id }, headers: { ...bearer(billing), ...{ 'X-Justification': 'RACE', 'Idempotency-Key': `race-r-${i}` } }, body: { reason: 'race' } })),
      ),
      ...topUps.map((_, i) =>
        t.http.post('/v1/volumes').set(key).set('Idempotency-Key', `race-b-${i}`).send({ name: `race-${i}`, region: 'id-jkt', size_gb: 500, term_months: 1, currency: 'USD' }),
      ),
    ]);
    const refunds = answers.slice(0, 10);
    const buys = answers.slice(10);
    for (const r of refunds) expect([201, 409]).toContain(r.status);
    for (const b of buys) expect([202, 402]).toContain(b.status);
    const refunded = refunds.filter((r) => r.status === 201).length;
    const bought = buys.filter((b) => b.status === 202).length;
    expect(refunded + bought).toBe(10);
    const [balance] = await t.sql<{ available: string; reserved: string }>(`SELECT available::text, reserved::text FROM wallet_balances WHERE org_id = 'org_rz' AND currency = 'USD'`);
    expect(BigInt(balance.available)).toBe(0n);
    expect(BigInt(balance.reserved)).toBe(BigInt(bought) * 1_000_000n);
    const debits = await t.sql<{ refund_id: string; n: number }>(`SELECT refund_id, count(*)::int AS n FROM wallet_ledger WHERE kind = 'refund' GROUP BY refund_id`);
    expect(debits).toHaveLength(refunded);
    expect(debits.every((d) => d.n === 1)).toBe(true);
    expect(await t.sql(`SELECT count(*)::int AS n FROM top_up_refunds WHERE status = 'succeeded'`)).toEqual([{ n: refunded }]);
    await expectVerified(t);
  });
});
