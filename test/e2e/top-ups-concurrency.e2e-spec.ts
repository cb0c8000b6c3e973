import { usingPostgres } from '../support/database';
import { apiToken, bearer, organization, region } from '../support/fixtures';
import { paymentProviders } from '../support/payment-providers';
import { TestApp, startTestApp } from '../support/test-app';
import { expectVerified } from '../support/verify';

/**
 * Payment events under concurrency (PostgreSQL: the embedded engine runs one transaction at a
 * time), with either payment provider (the simulated one, or Stripe's adapter against a local
 * Stripe): the same paid event 20 times at once, and 20 distinct paid events for one organization
 * at once. Each top-up is credited once, the balance equals the ledger, every invariant holds.
 */
const describeOnPostgres = usingPostgres() ? describe : describe.skip;
if (!usingPostgres()) console.log('top-ups-concurrency: skipped on the embedded engine (one transaction at a time); set DATABASE_URL');

describeOnPostgres.each(paymentProviders())('payment events at once (PostgreSQL, $name)', (p) => {
  let t: TestApp;
  const key = bearer(apiToken('pc', 'bw'));

  beforeAll(async () => {
    // 60 requests at once queue for the pool's 10 connections behind one organization lock: on a loaded machine longer than the default 5 s.
    t = await startTestApp({ ...(await p.start()), dbConnectTimeoutMs: 60_000 });
    p.attach(t);
    await t.seed({
      regions: [region()],
      organizations: [{ ...organization('pc', { wallet: { USD: '1.00000', IDR: '0' } }), api_keys: [{ name: 'b', scopes: ['billing:write', 'vm:write'], token: apiToken('pc', 'bw') }] }],
    });
  });
  afterAll(async () => {
    await t?.close();
    await p.close();
  });

  /** A pending top-up of `amount` USD and its paid event (Stripe's cents). */
  async function pendingTopUp(amount: string) {
    const res = await t.http.post('/v1/wallet/top-ups').set(key).send({ amount, currency: 'USD' });
    expect(res.status).toBe(201);
    const id: string = res.body.top_up.id;
    const [{ session_id }] = await t.sql<{ session_id: string }>(`SELECT session_id FROM top_ups WHERE id = $1`, [id]);
    const body = p.event('checkout.session.completed', { id: session_id, topUpId: id, amountTotal: Math.round(Number(amount) * 100), currency: 'usd' });
    return { id, body };
  }
  const deliver = (body: string) => t.http.post(`/v1/payment-events/${p.name}`).set('Content-Type', 'application/json').set('Stripe-Signature', p.sign(body)).send(body);
  const usd = async () => (await t.sql<{ available: string; reserved: string }>(`SELECT available::text, reserved::text FROM wallet_balances WHERE org_id = 'org_pc' AND currency = 'USD'`))[0];
  const creditsOf = async (ids: string[]) =>
    t.sql<{ top_up_id: string; n: number }>(`SELECT top_up_id, count(*)::int AS n FROM wallet_ledger WHERE top_up_id = ANY($1) GROUP BY top_up_id ORDER BY top_up_id`, [ids]);

  it('20 identical paid events at once: 20 × 200, one credit, one applied and 19 duplicates', async () => {
    const before = BigInt((await usd()).available);
    const { id, body } = await pendingTopUp('10.00');
    const answers = await Promise.all(Array.from({ length: 20 }, () => deliver(body)));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(await creditsOf([id])).toEqual([{ top_up_id: id, n: 1 }]);
    expect(BigInt((await usd()).available)).toBe(before + 1_000_000n);
    expect(await t.sql(`SELECT outcome, count(*)::int AS n FROM payment_events WHERE top_up_id = $1 GROUP BY outcome`, [id])).toEqual([{ outcome: 'applied', n: 1 }]);
    await expectVerified(t);
  });

  it('20 distinct paid events for one organization at once (and each again under a new id): every top-up credited once, the balance the ledger', async () => {
    const before = BigInt((await usd()).available);
    const topUps: { id: string; body: string }[] = [];
    // Five pending at most: four rounds of five.
    for (let round = 0; round < 4; round++) {
      const batch = [];
      for (let i = 0; i < 5; i++) batch.push(await pendingTopUp(`${5 + round * 5 + i}.00`));
      topUps.push(...batch);
      if (round < 3) {
        const answers = await Promise.all(batch.map((b) => deliver(b.body)));
        expect(answers.map((a) => a.status)).toEqual(Array(5).fill(200));
      }
    }
    // Now all 20 at once: 15 already applied (duplicates) and 5 new, plus every one re-sent under a new event id.
    const resent = topUps.map(({ body }) => JSON.stringify({ ...JSON.parse(body), id: `${JSON.parse(body).id}x` }));
    const answers = await Promise.all([...topUps.map((x) => deliver(x.body)), ...resent.map(deliver)]);
    expect(answers.map((a) => a.status)).toEqual(Array(40).fill(200));
    const ids = topUps.map((x) => x.id).sort();
    expect(await creditsOf(ids)).toEqual(ids.map((id) => ({ top_up_id: id, n: 1 })));
    const total = topUps.reduce((sum, _x, k) => sum + BigInt(5 + k) * 100_000n, 0n);
    expect(BigInt((await usd()).available)).toBe(before + total);
    const [{ succeeded }] = await t.sql<{ succeeded: number }>(`SELECT count(*)::int AS succeeded FROM top_ups WHERE id = ANY($1) AND status = 'succeeded'`, [ids]);
    expect(succeeded).toBe(20);
    // The newest history entry carries the balance.
    const newest = await t.http.get('/v1/wallet/transactions?currency=USD&limit=1').set(key);
    expect(newest.body.transactions[0].available_after).toBe(
      (await t.http.get('/v1/wallet').set(key)).body.balances.find((b: { currency: string }) => b.currency === 'USD').available,
    );
    await expectVerified(t);
  });

  it('60 creates at once without an Idempotency-Key: exactly 5 pending, the rest 409 quota_exceeded; 10 cancels of one at once: one 200', async () => {
    const pending = async () => (await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM top_ups WHERE org_id = 'org_pc' AND status = 'pending'`))[0].n;
    expect(await pending()).toBe(0);
    const created = await Promise.all(Array.from({ length: 60 }, (_, i) => t.http.post('/v1/wallet/top-ups').set(key).send({ amount: `${10 + i}.00`, currency: 'USD' })));
    const statuses = created.map((r) => (r.status === 409 ? `409 ${r.body.error.code}` : String(r.status)));
    expect(statuses.filter((s) => s === '201')).toHaveLength(5);
    expect(statuses.filter((s) => s !== '201')).toEqual(Array(55).fill('409 quota_exceeded'));
    expect(await pending()).toBe(5);
    const id = created.find((r) => r.status === 201)!.body.top_up.id as string;
    const canceled = await Promise.all(Array.from({ length: 10 }, () => t.http.post(`/v1/wallet/top-ups/${id}/cancel`).set(key).send({})));
    expect(canceled.map((r) => r.status).sort()).toEqual([200, ...Array(9).fill(409)]);
    expect(canceled.filter((r) => r.status === 409).map((r) => r.body.error.code)).toEqual(Array(9).fill('invalid_state'));
    expect(await t.sql(`SELECT status FROM top_ups WHERE id = $1`, [id])).toEqual([{ status: 'canceled' }]);
    expect(await pending()).toBe(4);
    await expectVerified(t);
  });
});
