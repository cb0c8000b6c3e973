import { apiToken, bearer, orgWithDetachedVolumes, region } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';

/**
 * Many requests at once on whichever engine runs the suite. On the embedded engine every
 * request shares one PGlite: with several connections, pglite-socket interleaved the
 * extended-protocol messages (Parse/Bind/Execute) of different connections outside
 * transactions, so a valid key was answered 401 and some requests 500 ("portal does not exist").
 */
describe('concurrent requests', () => {
  let t: TestApp;
  const token = apiToken('cc', 'rw');
  const N = 40;

  beforeAll(async () => {
    // The 40 renewals take turns on the organization's row, each holding a pool connection while it
    // waits; on a loaded machine the last requests wait for a connection longer than the default
    // 5 s (a 500: the server's overload, not what this file tests). A minute here.
    t = await startTestApp({ dbConnectTimeoutMs: 60_000 });
    await t.seed({ regions: [region()], organizations: [orgWithDetachedVolumes('cc', N)] });
  });
  afterAll(async () => t?.close());

  it('answers every concurrent read and renewal correctly, and charges each renewal once', async () => {
    const reads = Array.from({ length: N }, (_, i) => t.http.get(`/v1/volumes/vol_ccv${i + 1}`).set(bearer(token)));
    const renewals = Array.from({ length: N }, (_, i) =>
      t.http.post(`/v1/volumes/vol_ccv${i + 1}/renew`).set(bearer(token)).set('Idempotency-Key', `cc-${i}`).send({ term_months: 1 }),
    );
    const [readResults, renewResults] = await Promise.all([Promise.all(reads), Promise.all(renewals)]);

    expect(readResults.map((r) => r.status)).toEqual(Array(N).fill(200));
    expect(readResults.map((r) => r.body.id)).toEqual(Array.from({ length: N }, (_, i) => `vol_ccv${i + 1}`));
    expect(renewResults.map((r) => r.status)).toEqual(Array(N).fill(202));
    expect(new Set(renewResults.map((r) => r.body.operation.id)).size).toBe(N);

    // 40 renewals of 100 GB × 0.02 USD × 1 month = 40 × 2.00000 USD held.
    const wallet = await t.http.get('/v1/wallet').set(bearer(token));
    expect(wallet.body).toEqual({
      balances: [
        { currency: 'USD', available: '20.00000', reserved: '80.00000' },
        { currency: 'IDR', available: '1500000', reserved: '0' },
      ],
    });
    expect(
      await t.sql("SELECT kind, currency, count(*)::int AS n, sum(amount)::text AS total FROM wallet_ledger WHERE org_id = 'org_cc' GROUP BY 1, 2 ORDER BY 1, 2"),
    ).toEqual([
      { kind: 'credit', currency: 'IDR', n: 1, total: '1500000' },
      { kind: 'credit', currency: 'USD', n: 1, total: '10000000' },
      { kind: 'hold', currency: 'USD', n: N, total: '8000000' },
    ]);
  });
});
