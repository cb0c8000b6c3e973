import { scaled } from '../support/deadlines';
import { usingPostgres } from '../support/database';
import { apiToken, organization, region } from '../support/fixtures';
import { validatedFetch } from '../support/openapi-validation';
import { slowProviderWorkers } from '../support/processes';
import { TestApp, startTestApp } from '../support/test-app';
import { expectInvariantsHold } from '../support/verify';

/**
 * lifecycle.md "The storage provider", issue 12 done-when: a server process SIGKILLed while disk
 * operations are mid-step (each provider call takes PROVIDER_LATENCY_MS=300), another started on
 * the same database: every operation ends, no disk is created or attached twice at the provider,
 * every hold is settled exactly once, and `cli verify` finds every invariant holding (provider
 * disks = volumes included). PostgreSQL only: several processes share the database.
 */
const describeOnPostgres = usingPostgres() ? describe : describe.skip;
if (!usingPostgres()) console.log('volume-processes.e2e-spec: skipped, needs DATABASE_URL (PostgreSQL)');

describeOnPostgres('disk operations survive a SIGKILLed worker (PostgreSQL)', () => {
  let t: TestApp;
  const token = apiToken('kp', 'rw');
  const SERVERS = ['vm_kpweb1', 'vm_kpweb2', 'vm_kpweb3'];
  const workers = slowProviderWorkers(() => t.settings.databaseUrl);
  const call = async (url: string, method: string, path: string, body?: object) => {
    const res = await validatedFetch(`${url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as { operation: { id: string } } };
  };

  beforeAll(async () => {
    t = await startTestApp();
    const base = organization('kp');
    await t.seed({
      regions: [region('id-jkt', { capacity_gb: 100000 })],
      organizations: [
        {
          ...base,
          wallet: { USD: '10000.00000', IDR: '0' },
          servers: SERVERS.map((id, i) => ({ id, name: `web-${i + 1}`, region: 'id-jkt', zone: 'id-jkt-a' })),
          volumes: [
            // Two attached ones to detach or delete, two detached ones to attach or delete.
            ...[1, 2].map((i) => ({ ...base.volumes[0], id: `vol_kpatt${i}`, name: `att-${i}`, server: 'vm_kpweb1', mount_path: `/mnt/att${i}` })),
            ...[1, 2].map((i) => ({ ...base.volumes[0], id: `vol_kpfree${i}`, name: `free-${i}`, server: undefined, mount_path: undefined })),
          ],
        },
      ],
    });
  });
  afterAll(async () => {
    await workers.killAll();
    await t?.close();
  });

  it('every operation ends once, nothing created or attached twice, every hold settled once', async () => {
    const api = await workers.api();
    const accepted: string[] = [];
    const expect202 = (r: { status: number; body: { operation: { id: string } } }) => {
      expect(r.status).toBe(202);
      accepted.push(r.body.operation.id);
    };
    const purchases = Array.from({ length: 12 }, (_, i) =>
      call(api.url, 'POST', '/v1/volumes', {
        name: `bought-${i}`, region: 'id-jkt', size_gb: 10, term_months: 1, currency: 'USD', ...(i % 2 === 0 ? { server_id: SERVERS[i % 3] } : {}),
      }),
    );
    for (const r of await Promise.all(purchases)) expect202(r);
    expect202(await call(api.url, 'POST', '/v1/volumes/vol_kpatt1/detach'));
    expect202(await call(api.url, 'DELETE', '/v1/volumes/vol_kpatt2?detach=true'));
    expect202(await call(api.url, 'POST', '/v1/volumes/vol_kpfree1/attach', { server_id: 'vm_kpweb2' }));
    expect202(await call(api.url, 'DELETE', '/v1/volumes/vol_kpfree2'));

    // Kill the process while several operations are inside a step (the provider call in flight).
    await workers.killMidStepAndFinish(t.sql, 3);

    expect(await t.sql(`SELECT type, status, count(*)::int AS n FROM operations GROUP BY type, status ORDER BY type, status`)).toEqual([
      { type: 'volume.attach', status: 'succeeded', n: 1 },
      { type: 'volume.create', status: 'succeeded', n: 12 },
      { type: 'volume.delete', status: 'succeeded', n: 2 },
      { type: 'volume.detach', status: 'succeeded', n: 1 },
    ]);
    expect(accepted).toHaveLength(16);
    // Some operation was taken over after the kill (its step resumed by the second process).
    expect(Number((await t.sql<{ n: string }>(`SELECT count(*) AS n FROM operations WHERE attempts >= 2`))[0].n)).toBeGreaterThan(0);

    // At the provider: each step took effect once (keyed by operation and step), one disk per volume.
    expect(await t.sql(`SELECT volume_id, step, count(*)::int AS n FROM provider_calls GROUP BY volume_id, step HAVING count(*) > 1`)).toEqual([]);
    expect(
      await t.sql(
        `SELECT action, count(*)::int AS n FROM provider_calls WHERE action IN ('create', 'attach', 'mount') GROUP BY action ORDER BY action`,
      ),
    ).toEqual([
      { action: 'attach', n: 6 + 1 },
      { action: 'create', n: 12 },
      { action: 'mount', n: 6 + 1 },
    ]);
    expect(await t.sql(`SELECT count(*)::int AS n FROM provider_disks d JOIN volumes v ON v.id = d.volume_id WHERE v.id LIKE 'vol_%'`)).toEqual([{ n: 16 }]);

    // Every purchase held, then captured exactly once; nothing released.
    const perOp = await t.sql<{ holds: number; captures: number; releases: number }>(
      `SELECT count(*) FILTER (WHERE l.kind = 'hold')::int AS holds, count(*) FILTER (WHERE l.kind = 'capture')::int AS captures,
              count(*) FILTER (WHERE l.kind = 'release')::int AS releases
         FROM operations o LEFT JOIN wallet_ledger l ON l.operation_id = o.id WHERE o.type = 'volume.create' GROUP BY o.id`,
    );
    expect(perOp).toEqual(Array(12).fill({ holds: 1, captures: 1, releases: 0 }));
    expect(await t.sql(`SELECT reserved::text FROM wallet_balances WHERE org_id = 'org_kp' AND currency = 'USD'`)).toEqual([{ reserved: '0' }]);

    expect(await t.sql(`SELECT id, status, server_id FROM volumes WHERE id LIKE 'vol_kp%' ORDER BY id`)).toEqual([
      { id: 'vol_kpatt1', status: 'available', server_id: null },
      { id: 'vol_kpatt2', status: 'deleted', server_id: null },
      { id: 'vol_kpfree1', status: 'attached', server_id: 'vm_kpweb2' },
      { id: 'vol_kpfree2', status: 'deleted', server_id: null },
    ]);
    expectInvariantsHold(t.settings.databaseUrl);
  }, scaled(180_000));
});
