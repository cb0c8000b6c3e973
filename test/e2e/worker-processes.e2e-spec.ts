import { usingPostgres } from '../support/database';
import { scaled } from '../support/deadlines';
import { apiToken, orgWithDetachedVolumes, region } from '../support/fixtures';
import { validatedFetch } from '../support/openapi-validation';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ServerProcess, startServerProcess } from '../support/processes';
import { waitFor } from '../support/renewals';
import { TestApp, startTestApp } from '../support/test-app';
import { expectInvariantsHold } from '../support/verify';

/**
 * Real server processes (node dist/src/main.js) sharing one PostgreSQL schema, each running the
 * worker. PostgreSQL only: the embedded engine belongs to one process.
 */
const describeOnPostgres = usingPostgres() ? describe : describe.skip;
if (!usingPostgres()) {
  console.log('worker-processes.e2e-spec: skipped, needs DATABASE_URL (PostgreSQL); several processes cannot share the embedded engine');
}

const EXPIRES = '2030-01-31T00:00:00.000Z';
/** One month after EXPIRES, clamped: renewed exactly once. */
const RENEWED = '2030-02-28T00:00:00.000Z';

const org = (suffix: string, n: number) => orgWithDetachedVolumes(suffix, n, { USD: '10000.00000' }, { expires_at: EXPIRES });

/** Renews every volume through `urls` (round robin), `parallel` requests at a time. */
async function renewAll(urls: string[], suffix: string, n: number, parallel = 10): Promise<void> {
  for (let start = 0; start < n; start += parallel) {
    const batch = Array.from({ length: Math.min(parallel, n - start) }, (_, j) => start + j);
    const statuses = await Promise.all(
      batch.map(async (i) => {
        const res = await validatedFetch(`${urls[i % urls.length]}/v1/volumes/vol_${suffix}v${i + 1}/renew`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${apiToken(suffix, 'rw')}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ term_months: 1 }),
        });
        return res.status;
      }),
    );
    expect(statuses).toEqual(Array(batch.length).fill(202));
  }
}

describeOnPostgres('the worker in several server processes (PostgreSQL)', () => {
  let t: TestApp;
  /** The in-process app's URL: it runs no worker (it creates operations that only the processes execute). */
  let appUrl: string;
  const running: ServerProcess[] = [];

  const serverEnv = (port: number, extra: Record<string, string> = {}) => ({
    DATABASE_URL: t.settings.databaseUrl,
    PORT: String(port),
    HOST: '127.0.0.1',
    DEMO_SEED: 'false',
    WORKER_ENABLED: 'true',
    WORKER_INTERVAL_MS: '20',
    LOG_LEVEL: 'info',
    DB_POOL_SIZE: '5',
    ...extra,
  });
  const start = async (port: number, extra?: Record<string, string>) => {
    const p = await startServerProcess(serverEnv(port, extra));
    running.push(p);
    return p;
  };
  const count = async (sql: string, params: unknown[] = []) => Number((await t.sql<{ n: string }>(sql, params))[0].n);

  /** Invariants of money and operations for one organization, once every operation has ended. */
  async function expectSettled(orgId: string, n: number, capturedEach: string) {
    expect(await t.sql(`SELECT status, count(*)::int AS n FROM operations WHERE org_id = $1 GROUP BY status`, [orgId])).toEqual([
      { status: 'succeeded', n },
    ]);
    // Every operation: one hold, one capture, no release.
    const perOp = await t.sql(
      `SELECT count(*) FILTER (WHERE l.kind = 'hold')::int AS holds, count(*) FILTER (WHERE l.kind = 'capture')::int AS captures,
              count(*) FILTER (WHERE l.kind = 'release')::int AS releases, count(*)::int AS ops
         FROM operations o JOIN wallet_ledger l ON l.operation_id = o.id WHERE o.org_id = $1 GROUP BY o.id`,
      [orgId],
    );
    expect(perOp).toHaveLength(n);
    expect(new Set(perOp.map((r) => JSON.stringify(r)))).toEqual(new Set([JSON.stringify({ holds: 1, captures: 1, releases: 0, ops: 2 })]));
    expect(await t.sql(`SELECT DISTINCT amount::text AS amount FROM wallet_ledger WHERE org_id = $1 AND kind = 'capture'`, [orgId])).toEqual([
      { amount: capturedEach },
    ]);
    // The ledger sums are the balance: available = credits - holds + releases; reserved = holds - captures - releases.
    const [sums] = await t.sql(
      `SELECT (sum(amount) FILTER (WHERE kind = 'credit') - sum(amount) FILTER (WHERE kind = 'hold')
               + coalesce(sum(amount) FILTER (WHERE kind = 'release'), 0))::text AS available,
              (sum(amount) FILTER (WHERE kind = 'hold') - coalesce(sum(amount) FILTER (WHERE kind = 'capture'), 0)
               - coalesce(sum(amount) FILTER (WHERE kind = 'release'), 0))::text AS reserved
         FROM wallet_ledger WHERE org_id = $1`,
      [orgId],
    );
    const [balance] = await t.sql(`SELECT available::text AS available, reserved::text AS reserved FROM wallet_balances WHERE org_id = $1`, [orgId]);
    expect(balance).toEqual(sums);
    expect(balance.reserved).toBe('0');
    // Each volume renewed exactly once.
    expect(await t.sql(`SELECT to_char(expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS e, count(*)::int AS n FROM volumes WHERE org_id = $1 GROUP BY 1`, [orgId])).toEqual([
      { e: RENEWED, n },
    ]);
  }

  beforeAll(async () => {
    t = await startTestApp();
    // 500 volumes of 100 GB: the region's capacity must hold them (used_gb <= capacity_gb).
    await t.seed({ regions: [region('id-jkt', { capacity_gb: 100_000 })], organizations: [org('two', 200), org('kill', 300)] });
    await t.app.listen(0, '127.0.0.1');
    appUrl = `http://127.0.0.1:${((t.app.getHttpServer() as Server).address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((p) => p.stop('SIGKILL')));
  });
  afterAll(async () => t?.close());

  it('two processes finish 200 operations, each executed exactly once', async () => {
    const [a, b] = await Promise.all([start(0), start(0)]);
    await renewAll([a.url, b.url], 'two', 200);
    await waitFor('200 operations to end', async () => (await count(`SELECT count(*) AS n FROM operations WHERE org_id = 'org_two' AND finished_at IS NULL`)) === 0, scaled(60000));

    await expectSettled('org_two', 200, '200000');
    // Each claimed once, and both processes did some of the work.
    expect(await t.sql(`SELECT DISTINCT attempts FROM operations WHERE org_id = 'org_two'`)).toEqual([{ attempts: 1 }]);
    const workers = await t.sql<{ locked_by: string; n: number }>(
      `SELECT locked_by, count(*)::int AS n FROM operations WHERE org_id = 'org_two' GROUP BY locked_by`,
    );
    expect(workers).toHaveLength(2);
    expect(workers.every((w) => w.locked_by.includes(`:${a.child.pid}:`) || w.locked_by.includes(`:${b.child.pid}:`))).toBe(true);
    // Two server processes started, 200 renewals and their worker steps: 36 to 38 s alone on the
    // 2-core machine, past the default deadline when Jest's other workers share it.
  }, scaled(150_000));

  it('a process killed (SIGKILL) while operations run: after a restart every operation ends and the money adds up', async () => {
    // Created while no worker runs (through the in-process app, which runs none), then one worker
    // with a short lease is killed mid-way.
    await renewAll([appUrl], 'kill', 300, 20);
    const victim = await start(0, { WORKER_LEASE_MS: '1500' });
    let state: { running: number; succeeded: number } = { running: 0, succeeded: 0 };
    await waitFor(
      'the worker to be mid-way (some operations done, some running)',
      async () => {
        const [row] = await t.sql<{ running: number; succeeded: number }>(
          `SELECT count(*) FILTER (WHERE status = 'running')::int AS running, count(*) FILTER (WHERE status = 'succeeded')::int AS succeeded
             FROM operations WHERE org_id = 'org_kill'`,
        );
        state = row;
        return row.succeeded > 0 && row.running > 0;
      },
      30000,
      2,
    );
    await victim.stop('SIGKILL');
    const [left] = await t.sql<{ running: number; unfinished: number }>(
      `SELECT count(*) FILTER (WHERE status = 'running')::int AS running, count(*) FILTER (WHERE finished_at IS NULL)::int AS unfinished
         FROM operations WHERE org_id = 'org_kill'`,
    );
    // Killed with work in hand: operations stuck running under a lease nobody renews.
    expect(left.running).toBeGreaterThan(0);
    expect(left.unfinished).toBeLessThan(300);
    expect(state.succeeded).toBeGreaterThan(0);

    await start(0, { WORKER_LEASE_MS: '1500' });
    await waitFor('every operation to end', async () => (await count(`SELECT count(*) AS n FROM operations WHERE org_id = 'org_kill' AND finished_at IS NULL`)) === 0, 60000);
    await expectSettled('org_kill', 300, '200000');
    // The operations the dead process held were taken over: claimed a second time.
    expect(await count(`SELECT count(*) AS n FROM operations WHERE org_id = 'org_kill' AND attempts = 2`)).toBeGreaterThanOrEqual(left.running);
  });

  it('at the end, `verify` finds every invariant holding', () => {
    expectInvariantsHold(t.settings.databaseUrl);
  });
});
