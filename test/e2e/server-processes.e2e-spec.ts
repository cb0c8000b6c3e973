import { scaled } from '../support/deadlines';
import { usingPostgres } from '../support/database';
import { apiToken, organization } from '../support/fixtures';
import { validatedFetch } from '../support/openapi-validation';
import { slowProviderWorkers } from '../support/processes';
import { IMAGES, SERVER_PLANS, serverRegion } from '../support/servers';
import { TestApp, startTestApp } from '../support/test-app';
import { expectInvariantsHold } from '../support/verify';

/**
 * A server process SIGKILLed while server purchases are mid-step (each compute provider call takes
 * PROVIDER_LATENCY_MS=300), another started on the same database: every vm.create ends, no
 * instance is created twice (calls keyed by server and operation/step), every hold is captured
 * once, and `cli verify` finds every invariant holding. PostgreSQL only: several processes share
 * the database.
 */
const describeOnPostgres = usingPostgres() ? describe : describe.skip;
if (!usingPostgres()) console.log('server-processes.e2e-spec: skipped, needs DATABASE_URL (PostgreSQL)');

describeOnPostgres('server purchases survive a SIGKILLed worker (PostgreSQL)', () => {
  let t: TestApp;
  const token = apiToken('ks', 'rw');
  const N = 4;
  const workers = slowProviderWorkers(() => t.settings.databaseUrl);

  beforeAll(async () => {
    t = await startTestApp();
    await t.seed({ server_plans: SERVER_PLANS, images: IMAGES, regions: [serverRegion()], organizations: [{ ...organization('ks'), volumes: [] }] });
  });
  afterAll(async () => {
    await workers.killAll();
    await t?.close();
  });

  it('every purchase ends once: running with its own ipv4, one instance each, each hold captured once, verify clean', async () => {
    const api = await workers.api();
    const bought = await Promise.all(
      Array.from({ length: N }, async (_, i) => {
        const res = await validatedFetch(`${api.url}/v1/servers`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ name: `app-${i + 1}`, region: 'id-jkt', plan: 'cx1', image: 'debian-12', term_months: 1, currency: 'USD' }),
        });
        return { status: res.status, body: (await res.json()) as { server: { id: string } } };
      }),
    );
    expect(bought.map((b) => b.status)).toEqual(Array(N).fill(202));
    await workers.killMidStepAndFinish(t.sql, 2);

    expect(await t.sql(`SELECT type, status, count(*)::int AS n FROM operations GROUP BY type, status`)).toEqual([{ type: 'vm.create', status: 'succeeded', n: N }]);
    const ids = bought.map((b) => b.body.server.id);
    const servers = await t.sql<{ id: string; status: string; ipv4: string | null }>(`SELECT id, status, ipv4 FROM servers WHERE id = ANY($1) ORDER BY id`, [ids]);
    expect(servers.map((s) => s.status)).toEqual(Array(N).fill('running'));
    expect(new Set(servers.map((s) => s.ipv4)).size).toBe(N);
    // Some operation was taken over after the kill (its step resumed by the second process).
    expect(Number((await t.sql<{ n: string }>(`SELECT count(*) AS n FROM operations WHERE attempts >= 2`))[0].n)).toBeGreaterThan(0);
    // At the provider: one live instance per bought server, with the server's address; none made twice.
    expect(
      await t.sql(`SELECT server_id, count(*)::int AS n, min(ipv4) AS ipv4 FROM provider_instances WHERE server_id = ANY($1) GROUP BY server_id ORDER BY server_id`, [ids]),
    ).toEqual(servers.map((s) => ({ server_id: s.id, n: 1, ipv4: s.ipv4 })));
    // Money: each purchase held once and captured once (4.50000 USD), nothing released; the wallet adds up.
    expect(
      await t.sql(`SELECT kind, count(*)::int AS n, sum(amount)::text AS amount FROM wallet_ledger WHERE org_id = 'org_ks' AND kind <> 'credit' GROUP BY kind ORDER BY kind`),
    ).toEqual([
      { kind: 'capture', n: N, amount: String(N * 450000) },
      { kind: 'hold', n: N, amount: String(N * 450000) },
    ]);
    expect(await t.sql(`SELECT available::text AS available, reserved::text AS reserved FROM wallet_balances WHERE org_id = 'org_ks' AND currency = 'USD'`)).toEqual([
      { available: String(10_000_000 - N * 450000), reserved: '0' },
    ]);
    expectInvariantsHold(t.settings.databaseUrl);
  }, scaled(180_000));
});
