import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { ExpireTopUps } from '../../src/modules/funding/application/top-ups.use-cases';
import { CreditWallet } from '../../src/modules/operator/credit-wallet.use-case';
import { DeliverWebhooks } from '../../src/modules/webhooks/application/deliver-webhooks.use-case';
import { usingPostgres } from '../support/database';
import { apiToken, bearer, organization, region } from '../support/fixtures';
import { paymentProviders } from '../support/payment-providers';
import { runCli } from '../support/processes';
import { TestApp, startTestApp } from '../support/test-app';
import { ReceivedWebhook, WebhookReceiver } from '../support/webhook-receiver';

const EVT_ID = /^evt_[A-Za-z0-9]{24}$/;

/**
 * The wallet's event webhooks end to end, on either engine and with either payment provider
 * (the simulated one, or Stripe's adapter against a local Stripe): a paid top-up sends
 * wallet.top_up.succeeded and wallet.credited, a failed or expired one its event, a canceled one
 * nothing, the operator's credit wallet.credited; a duplicate payment event credits and emits once.
 * Each delivery verifies with the standardwebhooks package and its body is, byte for byte, the
 * event envelope around what the resource's GET returns.
 */
describe.each(paymentProviders())('event webhooks of the wallet ($name)', (p) => {
  const sim = p.name === 'simulated';
  const itSim = sim ? it : it.skip;
  let t: TestApp;
  let receiver: WebhookReceiver;
  let secret: string;
  const admin = bearer(apiToken('whf', 'hooks'));
  const bw = bearer(apiToken('whf', 'bw'));

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    t = await startTestApp({ ...(await p.start()), webhookAllowPrivateUrls: true, webhookRetryScheduleS: [0, 2, 2, 2], webhookTimeoutMs: 2000 });
    p.attach(t);
    await t.seed({
      regions: [region()],
      organizations: [
        {
          ...organization('whf', { wallet: { USD: '10.00000', IDR: '0' } }),
          api_keys: [
            { name: 'billing', scopes: ['billing:write'], token: apiToken('whf', 'bw') },
            { name: 'hooks', scopes: ['webhooks:write'], token: apiToken('whf', 'hooks') },
          ],
        },
      ],
    });
    const res = await t.http.post('/v1/webhook-endpoints').set(admin).send({ url: receiver.url('/all'), events: ['*'] });
    expect(res.status).toBe(201);
    secret = res.body.secret;
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    await p.close();
  });

  /** Runs the delivery worker: what the receiver got meanwhile. */
  const deliver = async (): Promise<ReceivedWebhook[]> => {
    const from = receiver.received.length;
    await t.app.get(DeliverWebhooks).runUntilIdle();
    return receiver.received.slice(from);
  };
  /** The delivery verified with the endpoint's secret; its body exactly the envelope around `data` as its GET sends it. */
  const expectEvent = (got: ReceivedWebhook, type: string, createdAt: string, data: object) => {
    const event = new Webhook(secret).verify(got.body, got.headers as Record<string, string>) as { id: string };
    expect(event.id).toMatch(EVT_ID);
    expect(got.headers['webhook-id']).toBe(event.id);
    expect(got.body).toBe(`{"id":"${event.id}","type":"${type}","created_at":"${createdAt}","data":${JSON.stringify(data)}}`);
  };
  const create = async (amount: string, currency = 'USD') => {
    const res = await t.http.post('/v1/wallet/top-ups').set(bw).send({ amount, currency });
    expect(res.status).toBe(201);
    return res.body.top_up as { id: string; checkout_url: string };
  };
  const get = async (id: string) => {
    const res = await t.http.get(`/v1/wallet/top-ups/${id}`).set(bw);
    expect(res.status).toBe(200);
    return res;
  };
  const creditOf = async (topUpId: string) => {
    const res = await t.http.get(`/v1/wallet/transactions?top_up_id=${topUpId}`).set(bw);
    expect(res.status).toBe(200);
    return res.body.transactions as { created_at: string }[];
  };
  const sessionOf = async (topUpId: string) => (await t.sql<{ session_id: string }>(`SELECT session_id FROM top_ups WHERE id = $1`, [topUpId]))[0].session_id;
  const post = (body: string) => t.http.post(`/v1/payment-events/${p.name}`).set('Content-Type', 'application/json').set('Stripe-Signature', p.sign(body)).send(body);
  const sessionEvent = p.event;
  const available = async () => (await t.sql<{ available: string }>(`SELECT available::text FROM wallet_balances WHERE org_id = 'org_whf' AND currency = 'USD'`))[0].available;

  it('Pay at the checkout: wallet.top_up.succeeded with the top-up and wallet.credited with the credit, each as its GET returns it', async () => {
    const topUp = await create('20.00');
    expect(await deliver()).toEqual([]);
    await p.pay(topUp);
    const got = await deliver();
    expect(got).toHaveLength(2);
    const byType = (type: string) => got.find((g) => JSON.parse(g.body).type === type)!;
    const shown = await get(topUp.id);
    expect(shown.body).toMatchObject({ status: 'succeeded', amount: '20.00000', checkout_url: null });
    expectEvent(byType('wallet.top_up.succeeded'), 'wallet.top_up.succeeded', shown.body.updated_at, shown.body);
    const [credit] = await creditOf(topUp.id);
    expect(credit).toMatchObject({ type: 'credit', amount: '20.00000', available_after: '30.00000', source: 'top_up', top_up_id: topUp.id });
    expectEvent(byType('wallet.credited'), 'wallet.credited', credit.created_at, credit);
    expect(await available()).toBe('3000000');
  });

  // The events follow the top-up's change whatever the provider: past paying and expiring, the simulated provider's run covers them.
  itSim('the same paid event 3 times at once, then another paid event: one credit, one pair of events', async () => {
    const topUp = await create('7.00');
    const body = sessionEvent('checkout.session.completed', { id: await sessionOf(topUp.id), topUpId: topUp.id, amountTotal: 700, currency: 'usd' });
    const answers = await Promise.all([post(body), post(body), post(body)]);
    expect(answers.map((a) => [a.status, a.body])).toEqual(Array.from({ length: 3 }, () => [200, { received: true }]));
    const other = sessionEvent('checkout.session.completed', { id: await sessionOf(topUp.id), topUpId: topUp.id, amountTotal: 700, currency: 'usd' });
    expect((await post(other)).body).toEqual({ received: true });
    const got = await deliver();
    expect(got.map((g) => JSON.parse(g.body).type).sort()).toEqual(['wallet.credited', 'wallet.top_up.succeeded']);
    const credits = await creditOf(topUp.id);
    expect(credits).toHaveLength(1);
    expectEvent(got.find((g) => JSON.parse(g.body).type === 'wallet.credited')!, 'wallet.credited', credits[0].created_at, credits[0]);
    expect(await available()).toBe('3700000');
    expect(await t.sql(`SELECT type, count(*)::int AS n FROM webhook_events WHERE body LIKE $1 GROUP BY type ORDER BY type`, [`%${topUp.id}%`])).toEqual([
      { type: 'wallet.credited', n: 1 },
      { type: 'wallet.top_up.succeeded', n: 1 },
    ]);
  });

  it('expiry: wallet.top_up.expired with the expired top-up; a later payment then credits it with its own two events', async () => {
    const topUp = await create('8.00');
    await p.expire(topUp.id);
    expect(await t.app.get(ExpireTopUps).runOnce()).toBe(1);
    const [expired] = await deliver();
    const shown = await get(topUp.id);
    expect(shown.body).toMatchObject({ status: 'expired', checkout_url: null, paid_at: null });
    expectEvent(expired, 'wallet.top_up.expired', shown.body.updated_at, shown.body);
    expect(await deliver()).toEqual([]);
    const paid = sessionEvent('checkout.session.completed', { id: await sessionOf(topUp.id), topUpId: topUp.id, amountTotal: 800, currency: 'usd' });
    expect((await post(paid)).status).toBe(200);
    const late = await deliver();
    const after = await get(topUp.id);
    expect(after.body).toMatchObject({ status: 'succeeded' });
    expectEvent(late.find((g) => JSON.parse(g.body).type === 'wallet.top_up.succeeded')!, 'wallet.top_up.succeeded', after.body.updated_at, after.body);
    const [credit] = await creditOf(topUp.id);
    expectEvent(late.find((g) => JSON.parse(g.body).type === 'wallet.credited')!, 'wallet.credited', credit.created_at, credit);
    expect(late).toHaveLength(2);
  });

  itSim('async_payment_failed: wallet.top_up.failed with the failed top-up; nothing credited', async () => {
    const before = await available();
    const topUp = await create('9.00');
    const failed = sessionEvent('checkout.session.async_payment_failed', { id: await sessionOf(topUp.id), topUpId: topUp.id, amountTotal: 900, currency: 'usd', failureCode: 'card_declined' });
    expect((await post(failed)).status).toBe(200);
    const got = await deliver();
    expect(got).toHaveLength(1);
    const shown = await get(topUp.id);
    expect(shown.body).toMatchObject({ status: 'failed', failure_reason: p.failureReason('card_declined') });
    expectEvent(got[0], 'wallet.top_up.failed', shown.body.updated_at, shown.body);
    expect(await creditOf(topUp.id)).toEqual([]);
    expect(await available()).toBe(before);
  });

  itSim('a canceled top-up sends nothing (no event type announces a cancel), by the API or on the checkout page', async () => {
    const viaApi = await create('11.00');
    expect((await t.http.post(`/v1/wallet/top-ups/${viaApi.id}/cancel`).set(bw)).status).toBe(200);
    const viaPage = await create('12.00');
    expect((await request(t.app.getHttpServer()).post(`${new URL(viaPage.checkout_url).pathname}/cancel`)).status).toBe(200);
    expect((await get(viaApi.id)).body.status).toBe('canceled');
    expect((await get(viaPage.id)).body.status).toBe('canceled');
    expect(await deliver()).toEqual([]);
    expect(await t.sql(`SELECT id FROM webhook_events WHERE body LIKE $1 OR body LIKE $2`, [`%${viaApi.id}%`, `%${viaPage.id}%`])).toEqual([]);
  });

  // The operator's credits do not reach the provider: the simulated provider's run covers them.
  itSim("the operator's credit (CLI wallet:credit) sends wallet.credited with the credit as GET /v1/wallet/transactions lists it", async () => {
    const balance = await t.app.get(CreditWallet).execute({ orgId: 'org_whf', currency: 'USD', amount: '0.00001' });
    expect(balance.available.format()).toBe('45.00001');
    const got = await deliver();
    expect(got).toHaveLength(1);
    const list = await t.http.get('/v1/wallet/transactions?limit=1').set(bw);
    const [credit] = list.body.transactions;
    expect(credit).toMatchObject({ type: 'credit', amount: '0.00001', available_after: '45.00001', source: 'operator', top_up_id: null, operation_id: null });
    expectEvent(got[0], 'wallet.credited', credit.created_at, credit);
  });

  // The CLI as an operator runs it, a process of its own on the app's database (PostgreSQL: the embedded data dir takes one process at a time).
  (usingPostgres() && sim ? it : it.skip)('the CLI process wallet:credit records wallet.credited; the app delivers it', async () => {
    const r = runCli(['wallet:credit', '--org', 'org_whf', '--currency', 'USD', '--amount', '1.5'], { DATABASE_URL: t.settings.databaseUrl });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ currency: 'USD', available: '46.50001' });
    const got = await deliver();
    expect(got).toHaveLength(1);
    const [credit] = (await t.http.get('/v1/wallet/transactions?limit=1').set(bw)).body.transactions;
    expect(credit).toMatchObject({ type: 'credit', amount: '1.50000', available_after: '46.50001', source: 'operator' });
    expectEvent(got[0], 'wallet.credited', credit.created_at, credit);
  });
});
