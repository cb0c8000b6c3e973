import { scaled } from '../support/deadlines';
import { usingPostgres } from '../support/database';
import { apiToken, organization, region } from '../support/fixtures';
import { validatedFetch } from '../support/openapi-validation';
import { slowProviderWorkers } from '../support/processes';
import { testTemplates } from '../support/templates';
import { TestApp, startTestApp } from '../support/test-app';
import { expectInvariantsHold } from '../support/verify';

/**
 * A server process SIGKILLed while template operations are mid-step (each provider call takes
 * PROVIDER_LATENCY_MS=300), another started on the same database: every operation ends, each app
 * is installed once at the provider (calls keyed by deployment and operation/step), and `cli
 * verify` finds every invariant holding (apps = active deployments). PostgreSQL only: several
 * processes share the database.
 */
const describeOnPostgres = usingPostgres() ? describe : describe.skip;
if (!usingPostgres()) console.log('templates-processes.e2e-spec: skipped, needs DATABASE_URL (PostgreSQL)');

describeOnPostgres('template operations survive a SIGKILLed worker (PostgreSQL)', () => {
  let t: TestApp;
  const token = apiToken('kt', 'rw');
  const SERVERS = ['vm_ktweb1', 'vm_ktweb2', 'vm_ktweb3', 'vm_ktweb4'];
  const workers = slowProviderWorkers(() => t.settings.databaseUrl);
  const call = async (url: string, path: string, body: object) => {
    const res = await validatedFetch(`${url}${path}`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as { operation: { id: string }; deployment: { id: string } } };
  };

  beforeAll(async () => {
    t = await startTestApp();
    await t.seed({
      templates: testTemplates(),
      regions: [region()],
      organizations: [{ ...organization('kt'), servers: SERVERS.map((id, i) => ({ id, name: `web-${i + 1}`, region: 'id-jkt', zone: 'id-jkt-a' })), volumes: [] }],
    });
  });
  afterAll(async () => {
    await workers.killAll();
    await t?.close();
  });

  it('every operation ends once, each app installed once, the deployments active', async () => {
    const api = await workers.api();
    const deployed = await Promise.all(
      SERVERS.map((s, i) => call(api.url, `/v1/servers/${s}/deployments`, i % 2 === 0 ? { template: 'postgres', variables: { password: `pw-${i}` } } : { template: 'wordpress', variables: { admin_email: 'a@kt.test', admin_password: `pw-${i}` } })),
    );
    for (const r of deployed) expect(r.status).toBe(202);
    await workers.killMidStepAndFinish(t.sql, 2);

    expect(await t.sql(`SELECT type, status, count(*)::int AS n FROM operations GROUP BY type, status`)).toEqual([{ type: 'template.deploy', status: 'succeeded', n: 4 }]);
    expect(await t.sql(`SELECT DISTINCT status FROM deployments`)).toEqual([{ status: 'active' }]);
    // Some operation was taken over after the kill (its step resumed by the second process).
    expect(Number((await t.sql<{ n: string }>(`SELECT count(*) AS n FROM operations WHERE attempts >= 2`))[0].n)).toBeGreaterThan(0);
    // At the provider: each step took effect once, one install per deployment, one app each.
    expect(await t.sql(`SELECT deployment_id, step, count(*)::int AS n FROM provider_app_calls GROUP BY deployment_id, step HAVING count(*) > 1`)).toEqual([]);
    expect(await t.sql(`SELECT action, count(*)::int AS n FROM provider_app_calls GROUP BY action ORDER BY action`)).toEqual([
      { action: 'configure', n: 4 },
      { action: 'install', n: 4 },
      { action: 'start', n: 4 },
    ]);
    expect(await t.sql(`SELECT count(*)::int AS n, count(*) FILTER (WHERE state = 'running')::int AS running FROM provider_apps WHERE removed_at IS NULL`)).toEqual([{ n: 4, running: 4 }]);
    expectInvariantsHold(t.settings.databaseUrl);
  }, scaled(180_000));
});
