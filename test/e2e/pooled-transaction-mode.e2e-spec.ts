import { scaled } from '../support/deadlines';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { PgBouncer, startPgBouncer } from '../../bench/pgbouncer';
import { usingPostgres } from '../support/database';
import { apiToken, bearer, orgWithDetachedVolumes, region } from '../support/fixtures';
import { ServerProcess, startServerProcess } from '../support/processes';
import { sleep, waitFor } from '../support/renewals';
import { TestApp, startTestApp } from '../support/test-app';
import { expectInvariantsHold } from '../support/verify';

/**
 * DATABASE_POOL_MODE=transaction through a real PgBouncer 1.18 in transaction mode (the test
 * support starts one on a free port, installing Debian's package when missing), with no
 * DATABASE_DIRECT_URL: the API (this process, worker off) and a worker process share the
 * database only through the pooler, so the worker finds new operations by polling and a
 * long-poll sees an operation ended by the worker by reading it again every WORKER_INTERVAL_MS.
 * PgBouncer has 3 server connections: a named prepared statement would meet a connection that
 * never prepared it. PostgreSQL only (a pooler, processes).
 */
const describeOnPostgres = usingPostgres() ? describe : describe.skip;
if (!usingPostgres()) console.log('pooled-transaction-mode.e2e-spec: skipped, needs DATABASE_URL (PostgreSQL)');

describeOnPostgres('through PgBouncer in transaction mode (PostgreSQL)', () => {
  let bouncer: PgBouncer;
  let t: TestApp;
  let worker: ServerProcess | undefined;
  let directUrl: string;
  let pooledUrl: string;
  const database = `cds_pool_${randomBytes(5).toString('hex')}`;
  const rw = bearer(apiToken('pb', 'rw'));
  const admin = async <T>(work: (c: Client) => Promise<T>): Promise<T> => {
    const c = new Client({ connectionString: process.env.DATABASE_URL });
    await c.connect();
    try {
      return await work(c);
    } finally {
      await c.end();
    }
  };

  beforeAll(async () => {
    const base = new URL(process.env.DATABASE_URL!);
    await admin((c) => c.query(`CREATE DATABASE ${database}`));
    base.pathname = `/${database}`;
    base.search = '';
    directUrl = base.toString();
    bouncer = await startPgBouncer({ serverHost: base.hostname, serverPort: Number(base.port || 5432), users: [decodeURIComponent(base.username) || 'postgres'], poolSize: 3 });
    pooledUrl = bouncer.url(database, decodeURIComponent(base.username) || 'postgres');
    // The migrations run through the pooler too (one transaction).
    t = await startTestApp({ databaseUrl: pooledUrl, dbPoolMode: 'transaction', databaseDirectUrl: undefined, workerIntervalMs: 100 });
    await t.seed({ regions: [region()], organizations: [orgWithDetachedVolumes('pb', 12, { USD: '1000.00000', IDR: '0' })] });
    worker = await startServerProcess({
      DATABASE_URL: pooledUrl,
      DATABASE_POOL_MODE: 'transaction',
      DEMO_SEED: 'false',
      MIGRATIONS_RUN: 'false',
      WORKER_ENABLED: 'true',
      WORKER_INTERVAL_MS: '100',
      // A lease the PgBouncer restart kept it from ending runs out soon.
      WORKER_LEASE_MS: '2000',
      PROVIDER_LATENCY_MS: '50',
      DB_POOL_SIZE: '3',
    });
  }, scaled(90_000));
  afterAll(async () => {
    await worker?.stop('SIGKILL');
    await t?.close();
    await bouncer?.stop();
    await admin((c) => c.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`));
  });

  /** A client as the SDKs are: on a 5xx or a cut connection, the same request again with the same Idempotency-Key. */
  let retries = 0;
  const send = async (method: 'post', path: string, key: string, body: object): Promise<{ status: number; body: { operation: { id: string; status: string } } }> => {
    for (let attempt = 0; ; attempt++) {
      const res = await t.http[method](path).set(rw).set('Idempotency-Key', key).send(body).catch(() => undefined);
      if (res && res.status < 500) return { status: res.status, body: res.body };
      if (attempt >= 40) throw new Error(`${path} still failing after ${attempt} retries: ${res?.status} ${JSON.stringify(res?.body)}`);
      retries += 1;
      await sleep(100 + 50 * attempt);
    }
  };

  it('purchases and renewals answered once per Idempotency-Key across a PgBouncer restart; the worker and the long-polls poll; every invariant holds', async () => {
    const purchase = (i: number) => send('post', '/v1/volumes', `buy-${i}`, { name: `bought-${i}`, region: 'id-jkt', size_gb: 10, term_months: 1, currency: 'USD' });
    const renewal = (i: number) => send('post', `/v1/volumes/vol_pbv${i}/renew`, `renew-${i}`, { term_months: 1 });
    const requests = [...Array.from({ length: 10 }, (_, i) => () => purchase(i)), ...Array.from({ length: 12 }, (_, i) => () => renewal(i + 1))];

    // Half the traffic, then PgBouncer stopped (every client and server connection cut) while the rest is sent.
    const first = await Promise.all(requests.slice(0, 11).map((r) => r()));
    const rest = requests.slice(11).map((r, i) => sleep(i * 20).then(r));
    // Down 700 ms: longer than the service's own retries on a lost connection (300 ms), so some
    // requests answer 5xx and their clients send them again.
    await bouncer.restart(700);
    const answers = [...first, ...(await Promise.all(rest))];
    expect(answers.map((a) => a.status)).toEqual(Array(22).fill(202));
    expect(retries).toBeGreaterThan(0);

    // The same keys again: the same operations, not new ones.
    const again = await Promise.all(requests.map((r) => r()));
    expect(again.map((a) => [a.status, a.body.operation.id])).toEqual(answers.map((a) => [202, a.body.operation.id]));

    // A long-poll on the last renewal: the worker process ends it, this process (listening to
    // nothing) reads it again every 100 ms and answers with it succeeded, long before the 20 s.
    const last = answers[answers.length - 1].body.operation.id;
    const started = Date.now();
    const waited = await t.http.get(`/v1/operations/${last}?wait=20`).set(rw);
    expect(waited.status).toBe(200);
    expect(waited.body).toMatchObject({ id: last, status: 'succeeded', error: null });
    expect(Date.now() - started).toBeLessThan(scaled(15_000));

    await waitFor('every operation to end', async () => (await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM operations WHERE status IN ('pending', 'running')`))[0].n === 0, 60_000, 100);
    expect(await t.sql(`SELECT type, status, count(*)::int AS n FROM operations GROUP BY type, status ORDER BY type`)).toEqual([
      { type: 'volume.create', status: 'succeeded', n: 10 },
      { type: 'volume.renew', status: 'succeeded', n: 12 },
    ]);
    // One volume per purchase key, each renewal charged once: 10 purchases and 12 renewals of
    // 10 GB and 100 GB at 0.02 USD per GB-month (0.20 and 2.00 USD).
    expect(await t.sql(`SELECT count(*)::int AS n FROM volumes WHERE name LIKE 'bought-%'`)).toEqual([{ n: 10 }]);
    expect(await t.sql(`SELECT available::text, reserved::text FROM wallet_balances WHERE org_id = 'org_pb' AND currency = 'USD'`)).toEqual([
      { available: '97400000', reserved: '0' },
    ]);
    expectInvariantsHold(directUrl); }, 120_000);
});
