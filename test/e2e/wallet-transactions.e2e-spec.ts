import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { FixedClock } from '../../src/shared/kernel/clock/clock';
import request from 'supertest';
import { OWNER_PASSWORD, apiToken, bearer, organization, region } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';

/**
 * GET /v1/wallet/transactions: one entry per ledger row, newest first, each with the balance of
 * its currency right after it; filters; pages that never skip or repeat; access by scope.
 */
const NOW = '2026-11-22T10:00:00.000Z';
const WTX = /^wtx_[0-9a-f]{32}$/;

describe('GET /v1/wallet/transactions', () => {
  let t: TestApp;
  const clock = new FixedClock(new Date(NOW));
  const rw = bearer(apiToken('wh', 'rw'));

  beforeAll(async () => {
    t = await startTestApp({}, clock);
    await t.seed({
      regions: [region()],
      organizations: [
        {
          ...organization('wh'),
          api_keys: [
            ...organization('wh').api_keys,
            { name: 'billing', scopes: ['billing:read'], token: apiToken('wh', 'bill') },
            { name: 'hooks', scopes: ['webhooks:write'], token: apiToken('wh', 'hooks') },
          ],
        },
        organization('wo'),
      ],
    });
  });
  afterAll(async () => t?.close());

  const list = (query = '', headers = rw) => t.http.get(`/v1/wallet/transactions${query}`).set(headers);
  const wallet = async () => {
    const res = await t.http.get('/v1/wallet').set(rw);
    expect(res.status).toBe(200);
    return Object.fromEntries((res.body.balances as { currency: string; available: string; reserved: string }[]).map((b) => [b.currency, b]));
  };

  /** The newest entry of `currency` carries exactly the wallet's balance of that currency. */
  async function expectNewestMatchesWallet(currency: 'USD' | 'IDR') {
    const res = await list(`?currency=${currency}&limit=1`);
    expect(res.status).toBe(200);
    const b = (await wallet())[currency];
    expect({ available: res.body.transactions[0].available_after, reserved: res.body.transactions[0].reserved_after }).toEqual({
      available: b.available,
      reserved: b.reserved,
    });
  }

  it('lists the seed credits, newest first, with their after-values and whole bodies', async () => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      transactions: [
        {
          id: expect.stringMatching(WTX), type: 'credit', currency: 'IDR', amount: '1500000', available_after: '1500000', reserved_after: '0',
          source: 'operator', operation_id: null, top_up_id: null, description: 'Credit added by the operator', created_at: expect.any(String),
        },
        {
          id: expect.stringMatching(WTX), type: 'credit', currency: 'USD', amount: '100.00000', available_after: '100.00000', reserved_after: '0.00000',
          source: 'operator', operation_id: null, top_up_id: null, description: 'Credit added by the operator', created_at: expect.any(String),
        },
      ],
      next_cursor: null,
    });
    expect(new Set(res.body.transactions.map((x: { id: string }) => x.id)).size).toBe(2);
  });

  it('after-values equal the balances at every step: buy, renew (hold, capture), a failed renewal (hold, release), a top-up', async () => {
    const advance = t.app.get(AdvanceOperations);
    const buy = await t.http.post('/v1/volumes').set(rw).send({ name: 'db-1', region: 'id-jkt', size_gb: 10, term_months: 1, currency: 'USD' });
    expect(buy.status).toBe(202);
    const buyOp: string = buy.body.operation.id;
    await expectNewestMatchesWallet('USD');
    await advance.runUntilIdle();
    await expectNewestMatchesWallet('USD');

    const renew = await t.http.post('/v1/volumes/vol_whdata1/renew').set(rw).send({ term_months: 1 });
    expect(renew.status).toBe(202);
    const renewOp: string = renew.body.operation.id;
    await expectNewestMatchesWallet('USD');
    await advance.runUntilIdle();
    await expectNewestMatchesWallet('USD');

    const failing = await t.http.post('/v1/volumes/vol_whdata1/renew').set(rw).send({ term_months: 1, currency: 'IDR' });
    expect(failing.status).toBe(202);
    const failOp: string = failing.body.operation.id;
    await expectNewestMatchesWallet('IDR');
    await t.sql(
      `UPDATE volumes SET status = 'deleted', deleted_at = '2026-11-22T10:00:01Z', server_id = NULL, mount_path = NULL, mounted = false WHERE id = 'vol_whdata1'`,
    );
    await advance.runUntilIdle();
    await expectNewestMatchesWallet('IDR');

    const all = await list('?limit=100');
    expect(all.status).toBe(200);
    const rows = (all.body.transactions as Record<string, string | null>[]).map(({ type, currency, amount, available_after, reserved_after, operation_id, source, description }) => ({
      type, currency, amount, available_after, reserved_after, operation_id, source, description,
    }));
    const buyAmount = buy.body.volume.billing.amount as string;
    const usdAfterBuy = (100_00000 - Math.round(Number(buyAmount) * 100000)) / 100000; // test arithmetic only; the API sends strings
    const fmt = (n: number) => n.toFixed(5);
    expect(rows).toEqual([
      { type: 'release', currency: 'IDR', amount: '32000', available_after: '1500000', reserved_after: '0', operation_id: failOp, source: null, description: 'Reservation released (not charged): renewal of disk data-1 for 1 month' },
      { type: 'hold', currency: 'IDR', amount: '32000', available_after: '1468000', reserved_after: '32000', operation_id: failOp, source: null, description: 'Reserved for renewal of disk data-1 for 1 month' },
      { type: 'capture', currency: 'USD', amount: '2.00000', available_after: fmt(usdAfterBuy - 2), reserved_after: '0.00000', operation_id: renewOp, source: null, description: 'Renewal of disk data-1 for 1 month' },
      { type: 'hold', currency: 'USD', amount: '2.00000', available_after: fmt(usdAfterBuy - 2), reserved_after: '2.00000', operation_id: renewOp, source: null, description: 'Reserved for renewal of disk data-1 for 1 month' },
      { type: 'capture', currency: 'USD', amount: buyAmount, available_after: fmt(usdAfterBuy), reserved_after: '0.00000', operation_id: buyOp, source: null, description: 'Purchase of disk db-1 for 1 month' },
      { type: 'hold', currency: 'USD', amount: buyAmount, available_after: fmt(usdAfterBuy), reserved_after: buyAmount, operation_id: buyOp, source: null, description: 'Reserved for purchase of disk db-1 for 1 month' },
      { type: 'credit', currency: 'IDR', amount: '1500000', available_after: '1500000', reserved_after: '0', operation_id: null, source: 'operator', description: 'Credit added by the operator' },
      { type: 'credit', currency: 'USD', amount: '100.00000', available_after: '100.00000', reserved_after: '0.00000', operation_id: null, source: 'operator', description: 'Credit added by the operator' },
    ]);
    // Tops up through the checkout: the credit's after-values are the balance again.
    const owner = bearer((await t.http.post('/v1/auth/login').send({ email: 'owner@wh.test', password: OWNER_PASSWORD })).body.token);
    const topUp = await t.http.post('/v1/wallet/top-ups').set(owner).send({ amount: '50000', currency: 'IDR' });
    expect(topUp.status).toBe(201);
    const paid = await request(t.app.getHttpServer()).post(`${new URL(topUp.body.top_up.checkout_url).pathname}/pay`);
    expect(paid.status).toBe(200);
    await expectNewestMatchesWallet('IDR');
    const credit = await list(`?top_up_id=${topUp.body.top_up.id}`);
    expect(credit.body.transactions).toEqual([
      {
        id: expect.stringMatching(WTX), type: 'credit', currency: 'IDR', amount: '50000', available_after: '1550000', reserved_after: '0',
        source: 'top_up', operation_id: null, top_up_id: topUp.body.top_up.id, description: `Top-up ${topUp.body.top_up.id}`, created_at: expect.any(String),
      },
    ]);
    // The chain as cli verify's wallet.available_matches_ledger sees it (the deleted volume's disk is left at the provider on purpose).
    const sums = await t.sql(
      `SELECT currency, sum(CASE kind WHEN 'credit' THEN amount WHEN 'hold' THEN -amount WHEN 'release' THEN amount ELSE 0 END)::text AS available
         FROM wallet_ledger WHERE org_id = 'org_wh' GROUP BY currency ORDER BY currency`,
    );
    const w = await wallet();
    expect(sums).toEqual([
      { currency: 'IDR', available: '1550000' },
      { currency: 'USD', available: String(BigInt(w.USD.available.replace('.', ''))) },
    ]);
  });

  it('filters: currency, type, operation_id, top_up_id (unknown: an empty page), since and until', async () => {
    const all = (await list('?limit=100')).body.transactions as { id: string; type: string; currency: string; operation_id: string | null; created_at: string }[];
    const ids = (xs: { id: string }[]) => xs.map((x) => x.id);
    expect(ids((await list('?currency=IDR&limit=100')).body.transactions)).toEqual(ids(all.filter((x) => x.currency === 'IDR')));
    expect(ids((await list('?type=hold&limit=100')).body.transactions)).toEqual(ids(all.filter((x) => x.type === 'hold')));
    const op = all.find((x) => x.type === 'release')!.operation_id!;
    expect(ids((await list(`?operation_id=${op}`)).body.transactions)).toEqual(ids(all.filter((x) => x.operation_id === op)));
    expect((await list('?top_up_id=tu_unknown')).body).toEqual({ transactions: [], next_cursor: null });
    expect((await list('?operation_id=op_unknown')).body).toEqual({ transactions: [], next_cursor: null });
    expect(ids((await list(`?since=${encodeURIComponent(NOW)}&limit=100`)).body.transactions)).toEqual(ids(all.filter((x) => x.created_at >= NOW)));
    expect((await list(`?until=${encodeURIComponent('2000-01-01T00:00:00Z')}`)).body).toEqual({ transactions: [], next_cursor: null });
    expect((await list(`?since=${encodeURIComponent('2999-01-01T00:00:00+07:00')}`)).body).toEqual({ transactions: [], next_cursor: null });
  });

  it('pages of 3 cover every entry once, in order', async () => {
    const all = ids((await list('?limit=100')).body.transactions);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await list(`?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      expect(res.body.transactions.length).toBeLessThanOrEqual(3);
      seen.push(...ids(res.body.transactions));
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(all);
    expect(all.length).toBe(9);
  });

  it.each([
    ['currency', '?currency=EUR', 'currency must be USD or IDR'],
    ['currency repeated', '?currency=USD&currency=USD', 'currency must be USD or IDR'],
    ['type', '?type=debit', 'type must be one of credit, hold, capture, release, adjustment, refund'],
    ['since', '?since=yesterday', 'since must be an ISO 8601 timestamp with a zone such as 2026-11-21T10:00:00Z'],
    ['until', '?until=2026-11-21T10:00:00', 'until must be an ISO 8601 timestamp with a zone such as 2026-11-21T10:00:00Z'],
    ['operation_id', '?operation_id=a%20b', 'operation_id must be an id (1 to 128 of A-Z a-z 0-9 _ . -)'],
    ['top_up_id', '?top_up_id=%2F', 'top_up_id must be an id (1 to 128 of A-Z a-z 0-9 _ . -)'],
    ['limit', '?limit=101', 'limit must be a whole number from 1 to 100'],
    ['cursor', '?cursor=bm9wZQ', 'cursor is not a valid cursor; pass the next_cursor of a previous page'],
  ])('400 naming %s', async (name, query, message) => {
    const res = await list(query);
    expect(res.status).toBe(400);
    const field = name.split(' ')[0];
    expect(res.body).toEqual({ error: { code: 'invalid_request', message: expect.any(String), request_id: res.headers['x-request-id'], details: { field } } });
    if (!name.includes('repeated')) expect(res.body.error.message).toBe(message);
  });

  it('billing:read or vm:read opens it; another organization sees only its own; no scope of either: 403; no token: 401', async () => {
    const billing = await list('', bearer(apiToken('wh', 'bill')));
    expect(billing.status).toBe(200);
    expect(billing.body.transactions.length).toBe(9);
    const other = await list('?limit=100', bearer(apiToken('wo', 'rw')));
    expect(other.status).toBe(200);
    expect(other.body.transactions.map((x: { currency: string }) => x.currency)).toEqual(['IDR', 'USD']);
    const hooks = await list('', bearer(apiToken('wh', 'hooks')));
    expect(hooks.status).toBe(403);
    expect(hooks.body.error).toMatchObject({ code: 'forbidden' });
    expect(hooks.body.error.message).toContain('billing:read');
    const anonymous = await t.http.get('/v1/wallet/transactions');
    expect(anonymous.status).toBe(401);
  });
});

const ids = (xs: { id: string }[]) => xs.map((x) => x.id);
