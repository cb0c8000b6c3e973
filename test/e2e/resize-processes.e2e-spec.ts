import { scaled } from '../support/deadlines';
import { usingPostgres } from '../support/database';
import { apiToken, orgWithDetachedVolumes, region } from '../support/fixtures';
import { validatedFetch } from '../support/openapi-validation';
import { slowProviderWorkers } from '../support/processes';
import { TestApp, startTestApp } from '../support/test-app';
import { expectInvariantsHold } from '../support/verify';

/**
 * A server process SIGKILLed while disk resizes are mid-step (each storage provider call takes
 * PROVIDER_LATENCY_MS=300), another started on the same database: every volume.resize ends, each
 * disk is grown once (calls keyed by volume and operation/step), each hold is captured once, the
 * region's counter holds the new sizes, and `cli verify` finds every invariant holding.
 * PostgreSQL only: several processes share the database.
 */
const describeOnPostgres = usingPostgres() ? describe : describe.skip;
if (!usingPostgres()) console.log('resize-processes.e2e-spec: skipped, needs DATABASE_URL (PostgreSQL)');

describeOnPostgres('disk resizes survive a SIGKILLed worker (PostgreSQL)', () => {
  let t: TestApp;
  const token = apiToken('kr', 'rw');
  // Enough resizes that some are still inside their 300 ms provider call when the last is accepted, on a loaded machine.
  const N = 12;
  const workers = slowProviderWorkers(() => t.settings.databaseUrl);

  beforeAll(async () => {
    t = await startTestApp();
    await t.seed({ regions: [region()], organizations: [orgWithDetachedVolumes('kr', N, { USD: '100000.00000' }, { expires_at: '2030-01-31T00:00:00.000Z' })] });
  });
  afterAll(async () => {
    await workers.killAll();
    await t?.close();
  });

  it('every resize ends once: the disk grown, one provider call each, each hold captured once, verify clean', async () => {
    const usedBefore = Number((await t.sql<{ n: string }>(`SELECT used_gb::text AS n FROM region_usage WHERE id = 'id-jkt'`))[0].n);
    const api = await workers.api();
    const accepted = await Promise.all(
      Array.from({ length: N }, async (_, i) => {
        const res = await validatedFetch(`${api.url}/v1/volumes/vol_krv${i + 1}/resize`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ size_gb: 200 }),
        });
        return { status: res.status, body: (await res.json()) as { operation: { id: string } } };
      }),
    );
    expect(accepted.map((r) => r.status)).toEqual(Array(N).fill(202));
    await workers.killMidStepAndFinish(t.sql, 1);

    expect(await t.sql(`SELECT type, status, count(*)::int AS n FROM operations GROUP BY type, status`)).toEqual([{ type: 'volume.resize', status: 'succeeded', n: N }]);
    expect(await t.sql(`SELECT size_gb, resize_reserved_gb, count(*)::int AS n FROM volumes WHERE org_id = 'org_kr' GROUP BY size_gb, resize_reserved_gb`)).toEqual([
      { size_gb: 200, resize_reserved_gb: 0, n: N },
    ]);
    expect(Number((await t.sql<{ n: string }>(`SELECT used_gb::text AS n FROM region_usage WHERE id = 'id-jkt'`))[0].n)).toBe(usedBefore + N * 100);
    // At the provider: each disk grown by one recorded call, under its operation's key.
    expect(await t.sql(`SELECT count(*)::int AS n FROM provider_disks WHERE volume_id LIKE 'vol_krv%' AND size_gb = 200`)).toEqual([{ n: N }]);
    const calls = await t.sql<{ volume_id: string; step: string }>(`SELECT volume_id, step FROM provider_calls WHERE action = 'resize' ORDER BY volume_id`);
    const ops = await t.sql<{ id: string; volume_id: string }>(`SELECT id, volume_id FROM operations ORDER BY volume_id`);
    expect(calls).toEqual(ops.map((o) => ({ volume_id: o.volume_id, step: `${o.id}/resizing` })));
    // Money: each resize held once and captured once, the same amount, nothing released.
    const ledger = await t.sql<{ operation_id: string; kinds: string[]; amounts: string[] }>(
      `SELECT operation_id, array_agg(kind ORDER BY id) AS kinds, array_agg(amount::text ORDER BY id) AS amounts
         FROM wallet_ledger WHERE org_id = 'org_kr' AND kind <> 'credit' GROUP BY operation_id`,
    );
    expect(ledger).toHaveLength(N);
    for (const l of ledger) {
      expect(l.kinds).toEqual(['hold', 'capture']);
      expect(l.amounts[0]).toBe(l.amounts[1]);
    }
    expect(await t.sql(`SELECT reserved::text AS reserved FROM wallet_balances WHERE org_id = 'org_kr' AND currency = 'USD'`)).toEqual([{ reserved: '0' }]);
    expectInvariantsHold(t.settings.databaseUrl);
  }, scaled(180_000));
});
