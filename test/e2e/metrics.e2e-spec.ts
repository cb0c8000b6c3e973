import { SERVICE_SNAPSHOT_SQL, UNFINISHED_OPERATION_COUNTS_SQL } from '../../src/modules/monitoring/infrastructure/typeorm-service-stats';
import { Db } from '../../src/shared/database/transaction';
import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { MetricsServer } from '../../src/shared/observability/metrics-server';
import { FixedClock } from '../../src/shared/kernel/clock/clock';
import { apiToken, bearer, organization, region } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';

const NOW = new Date('2026-11-21T10:00:00.000Z');

async function scrape(t: TestApp, path = '/metrics'): Promise<{ status: number; type: string | null; lines: string[] }> {
  const res = await fetch(`http://127.0.0.1:${t.app.get(MetricsServer).port()}${path}`);
  return { status: res.status, type: res.headers.get('content-type'), lines: (await res.text()).split('\n') };
}

/**
 * The SQL statements of the service gauges while `during` runs (every statement goes through Db's
 * exec): the snapshot, or any other statement on the tables it reads (operations, wallets, top-ups,
 * webhook deliveries).
 */
async function statementsDuring(t: TestApp, during: () => Promise<unknown>): Promise<string[]> {
  const db = t.app.get(Db) as unknown as { exec: (sql: string) => Promise<unknown> };
  const spy = jest.spyOn(db, 'exec');
  try {
    await during();
    return spy.mock.calls.map(([sql]) => sql).filter((sql) => sql === SERVICE_SNAPSHOT_SQL || /\b(operations|wallet_ledger|wallet_balances|top_ups|webhook_deliveries)\b/.test(sql));
  } finally {
    spy.mockRestore();
  }
}

describe('Prometheus metrics on the metrics port', () => {
  let t: TestApp;
  const token = apiToken('met', 'rw');

  beforeAll(async () => {
    // No cache period: each scrape reads the database afresh (see the describe below for the cache).
    t = await startTestApp({ rateLimitPerMinute: 2, metricsGaugeCacheMs: 0 }, new FixedClock(NOW));
    await t.seed({ regions: [region()], organizations: [organization('met')] });
  });
  afterAll(async () => t?.close());

  it('counts requests by method, route pattern and status, and times them', async () => {
    expect((await t.http.get('/v1/wallet').set(bearer(token))).status).toBe(200);
    expect((await t.http.get('/v1/wallet').set(bearer(token))).status).toBe(200);
    expect((await t.http.get('/v1/wallet')).status).toBe(401);
    expect((await t.http.get('/v1/health')).status).toBe(200);
    expect((await t.http.get('/v1/docs/docs-init.js')).status).toBe(200);
    expect((await t.http.get('/v1/docs/no-such-file.js')).status).toBe(404);
    expect((await t.http.get('/v1/no-such-route/vol_123')).status).toBe(404);
    expect((await t.http.delete('/v1/wallet').set(bearer(token))).status).toBe(405);

    const { status, type, lines } = await scrape(t);
    expect(status).toBe(200);
    expect(type).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(lines).toEqual(
      expect.arrayContaining([
        '# TYPE cds_http_requests_total counter',
        'cds_http_requests_total{method="GET",route="/v1/wallet",status="200"} 2',
        'cds_http_requests_total{method="GET",route="/v1/wallet",status="401"} 1',
        'cds_http_requests_total{method="GET",route="/v1/health",status="200"} 1',
        'cds_http_requests_total{method="GET",route="/v1/docs/:asset",status="200"} 1',
        'cds_http_requests_total{method="GET",route="/v1/docs/:asset",status="404"} 1',
        'cds_http_requests_total{method="GET",route="unmatched",status="404"} 1',
        'cds_http_requests_total{method="DELETE",route="unmatched",status="405"} 1',
        '# TYPE cds_http_request_duration_seconds histogram',
        'cds_http_request_duration_seconds_count{method="GET",route="/v1/wallet",status="200"} 2',
        'cds_http_request_duration_seconds_bucket{le="+Inf",method="GET",route="/v1/wallet",status="200"} 2',
      ]),
    );
    // Route patterns only: no raw path, id or file name becomes a label.
    const requestLines = lines.filter((l) => l.startsWith('cds_http_request'));
    expect(requestLines.some((l) => /vol_123|docs-init|no-such/.test(l))).toBe(false);
    // Process metrics of prom-client come along.
    expect(lines).toEqual(expect.arrayContaining([expect.stringMatching(/^process_cpu_user_seconds_total \d/)]));
  });

  it('counts rate-limit rejections by route', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await t.http.post('/v1/auth/login').send({ email: 'x@met.test', password: 'wrong password' })).status);
    expect(statuses).toEqual([401, 401, 429]);
    const { lines } = await scrape(t);
    expect(lines).toEqual(
      expect.arrayContaining([
        'cds_rate_limit_rejections_total{route="/v1/auth/login"} 1',
        'cds_http_requests_total{method="POST",route="/v1/auth/login",status="401"} 2',
        'cds_http_requests_total{method="POST",route="/v1/auth/login",status="429"} 1',
      ]),
    );
  });

  it('reads operations by type and status, worker lag, wallet holds, pending top-ups and webhook deliveries from the database at each scrape, in one statement', async () => {
    let before!: Awaited<ReturnType<typeof scrape>>;
    expect(await statementsDuring(t, async () => (before = await scrape(t)))).toEqual([SERVICE_SNAPSHOT_SQL]);
    expect(before.lines).toEqual(
      expect.arrayContaining([
        'cds_worker_lag_seconds 0',
        'cds_wallet_holds_outstanding{currency="USD"} 0',
        'cds_wallet_holds_outstanding{currency="IDR"} 0',
        'cds_wallet_reserved_minor_units{currency="USD"} 0',
        'cds_wallet_reserved_minor_units{currency="IDR"} 0',
        'cds_top_ups_pending{currency="USD"} 0',
        'cds_top_ups_pending{currency="IDR"} 0',
        'cds_webhook_deliveries_pending 0',
        'cds_webhook_outbox_lag_seconds 0',
      ]),
    );
    expect(before.lines.filter((l) => l.startsWith('cds_operations{'))).toEqual([]);

    // A renewal accepted 90 s ago, still pending, holding 2.00000 USD; and an older one that succeeded.
    const created = new Date(NOW.getTime() - 90_000);
    await t.sql(
      `INSERT INTO operations (id, org_id, type, status, volume_id, steps, created_at)
       VALUES ('op_metpending00000000000', 'org_met', 'volume.renew', 'pending', 'vol_metdata1', '[{"name":"renewing","status":"running"}]', $1)`,
      [created],
    );
    await t.sql(
      `INSERT INTO operations (id, org_id, type, status, volume_id, steps, result, created_at, finished_at)
       VALUES ('op_metdone0000000000000', 'org_met', 'volume.renew', 'succeeded', 'vol_metdata1', '[]', '{}', $1, $1)`,
      [new Date(NOW.getTime() - 3_600_000)],
    );
    await t.sql(`INSERT INTO wallet_ledger (org_id, currency, kind, amount, operation_id) VALUES ('org_met', 'USD', 'hold', 200000, 'op_metpending00000000000')`);
    await t.sql(`UPDATE wallet_balances SET available = available - 200000, reserved = reserved + 200000 WHERE org_id = 'org_met' AND currency = 'USD'`);

    const after = await scrape(t);
    expect(after.lines).toEqual(
      expect.arrayContaining([
        '# TYPE cds_operations gauge',
        'cds_operations{type="volume.renew",status="pending"} 1',
        'cds_worker_lag_seconds 90',
        'cds_wallet_holds_outstanding{currency="USD"} 1',
        'cds_wallet_holds_outstanding{currency="IDR"} 0',
        'cds_wallet_reserved_minor_units{currency="USD"} 200000',
        'cds_wallet_reserved_minor_units{currency="IDR"} 0',
      ]),
    );
  });

  it('counts only unfinished operations (pending, running), through the partial index: finished ones are never scanned', async () => {
    // Thousands of finished operations, a few unfinished.
    await t.sql(
      `INSERT INTO operations (id, org_id, type, status, volume_id, steps, result, created_at, finished_at)
       SELECT 'op_metbulk' || lpad(g::text, 14, '0'), 'org_met', 'volume.renew', 'succeeded', 'vol_metdata1', '[]', '{}', $1, $1
         FROM generate_series(1, 5000) AS g`,
      [new Date(NOW.getTime() - 7_200_000)],
    );
    await t.sql(
      `INSERT INTO operations (id, org_id, type, status, steps, created_at, locked_by, locked_until, started_at)
       VALUES ('op_metrunning00000000000', 'org_met', 'volume.detach', 'running', '[]', $1, 'test', $1, $1)`,
      [new Date(NOW.getTime() - 30_000)],
    );
    await t.sql('ANALYZE operations');

    const lines = (await scrape(t)).lines.filter((l) => l.startsWith('cds_operations{'));
    expect(lines.sort()).toEqual([
      'cds_operations{type="volume.detach",status="running"} 1',
      'cds_operations{type="volume.renew",status="pending"} 1',
    ]);

    // The gauge's query reads operations through operations_claim_idx (unfinished rows only), never the whole table.
    const [{ 'QUERY PLAN': plan }] = await t.sql<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${UNFINISHED_OPERATION_COUNTS_SQL}`);
    const text = JSON.stringify(plan);
    expect(text).toContain('"Index Name":"operations_claim_idx"');
    expect(text).not.toContain('"Node Type":"Seq Scan"');
    // Leaves the operations as the next test expects them (only the renewal accepted earlier is unfinished).
    await t.sql("DELETE FROM operations WHERE id = 'op_metrunning00000000000' OR id LIKE 'op_metbulk%'");
  });

  it('times each operation from accepted to ended by type and status, and counts the size of each claim', async () => {
    // The renewal accepted 90 s ago (previous test), with the parameters the API writes; the worker ends it now.
    await t.sql(`UPDATE operations SET params = '{"term_months": 1, "currency": "USD", "amount": "2.00000"}' WHERE id = 'op_metpending00000000000'`);
    expect(await t.app.get(AdvanceOperations).runOnce()).toEqual({ claimed: 1, succeeded: 1, failed: 0, skipped: 0 });
    expect(await t.app.get(AdvanceOperations).runOnce()).toEqual({ claimed: 0, succeeded: 0, failed: 0, skipped: 0 });
    const { lines } = await scrape(t);
    expect(lines).toEqual(
      expect.arrayContaining([
        '# TYPE cds_operation_accept_to_finish_seconds histogram',
        'cds_operation_accept_to_finish_seconds_bucket{le="60",type="volume.renew",status="succeeded"} 0',
        'cds_operation_accept_to_finish_seconds_bucket{le="300",type="volume.renew",status="succeeded"} 1',
        'cds_operation_accept_to_finish_seconds_sum{type="volume.renew",status="succeeded"} 90',
        'cds_operation_accept_to_finish_seconds_count{type="volume.renew",status="succeeded"} 1',
        '# TYPE cds_worker_claim_batch_size histogram',
        'cds_worker_claim_batch_size_bucket{le="0"} 1',
        'cds_worker_claim_batch_size_bucket{le="1"} 2',
        'cds_worker_claim_batch_size_sum 1',
        'cds_worker_claim_batch_size_count 2',
      ]),
    );
  });

  it('serves only /metrics on the metrics port, and the public API has no metrics path', async () => {
    expect((await scrape(t, '/')).status).toBe(404);
    expect((await scrape(t, '/v1/wallet')).status).toBe(404);
    const api = await t.http.get('/metrics');
    expect(api.status).toBe(404);
    expect(api.body.error.code).toBe('not_found');
    expect((await t.http.get('/v1/metrics')).status).toBe(404);
  });
});

describe('metrics: the gauges read the database once per cache period', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ metricsGaugeCacheMs: 60_000 }, new FixedClock(NOW));
    await t.seed({ regions: [region()], organizations: [organization('mca')] });
  });
  afterAll(async () => t?.close());

  it('three scrapes in a row: one statement, the same figures', async () => {
    const scrapes: string[][] = [];
    const statements = await statementsDuring(t, async () => {
      for (let i = 0; i < 3; i++) scrapes.push((await scrape(t)).lines.filter((l) => /^cds_(operations|worker_lag|wallet_)/.test(l)));
    });
    expect(statements).toEqual([SERVICE_SNAPSHOT_SQL]);
    expect(scrapes[0]).toEqual([
      'cds_worker_lag_seconds 0',
      'cds_wallet_holds_outstanding{currency="USD"} 0',
      'cds_wallet_holds_outstanding{currency="IDR"} 0',
      'cds_wallet_reserved_minor_units{currency="USD"} 0',
      'cds_wallet_reserved_minor_units{currency="IDR"} 0',
    ]);
    expect(scrapes[1]).toEqual(scrapes[0]);
    expect(scrapes[2]).toEqual(scrapes[0]);
  });
});
