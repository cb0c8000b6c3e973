import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { scaled } from '../support/deadlines';
import { usingPostgres } from '../support/database';
import { apiToken, bearer, organization } from '../support/fixtures';
import { validatedFetch } from '../support/openapi-validation';
import { slowProviderWorkers } from '../support/processes';
import { IMAGES, SERVER_PLANS, serverRegion } from '../support/servers';
import { TestApp, startTestApp } from '../support/test-app';
import { expectInvariantsHold } from '../support/verify';

/**
 * Reserved addresses across connections and processes (PostgreSQL only): 50 concurrent
 * reservations in a region whose pool holds 20 addresses accept exactly 20, each a different
 * address, the rest 409 out_of_stock with nothing written (the pool's rows are the guard); a
 * server process SIGKILLed while assignments are mid-step (each provider call takes
 * PROVIDER_LATENCY_MS=300), another started on the same database: every ip.assign ends, each
 * address routed once, to its server, at the provider; `cli verify` finds every invariant holding.
 */
const describeOnPostgres = usingPostgres() ? describe : describe.skip;
if (!usingPostgres()) console.log('reserved-ips-processes.e2e-spec: skipped, needs DATABASE_URL (PostgreSQL)');

describeOnPostgres('reserved IPs: the pool under concurrency, assignments through a SIGKILL (PostgreSQL)', () => {
  let t: TestApp;
  const token = apiToken('kr', 'rw');
  const N = 6;
  const workers = slowProviderWorkers(() => t.settings.databaseUrl);
  const PRICE = { USD: '1.00000', IDR: '16000' };

  beforeAll(async () => {
    t = await startTestApp();
    const servers = Array.from({ length: N }, (_, i) => ({
      id: `vm_krs${i + 1}`, name: `s-${i + 1}`, region: 'sg-sin', zone: 'sg-sin-a', plan: 'cx1', image: 'debian-12', term_months: 1, currency: 'USD',
      expires_at: '2030-01-31T00:00:00.000Z',
    }));
    await t.seed({
      server_plans: SERVER_PLANS,
      images: IMAGES,
      regions: [
        // 16 + 4 = 20 addresses.
        serverRegion('id-jkt', 256, { reserved_ipv4_price_per_month: PRICE, reserved_ipv4_pool: ['198.51.100.0/28', '198.51.100.16/30'] }),
        serverRegion('sg-sin', 256, { name: 'Singapore', reserved_ipv4_price_per_month: PRICE, reserved_ipv4_pool: ['203.0.113.32/27'] }),
      ],
      organizations: [organization('kr', { servers, volumes: [], wallet: { USD: '1000.00000', IDR: '0' } })],
    });
  });
  afterAll(async () => {
    await workers.killAll();
    await t?.close();
  });

  it('50 concurrent reservations in a pool of 20: exactly 20 accepted, each a different address, 30 out_of_stock, 20 holds', async () => {
    const results = await Promise.all(
      Array.from({ length: 50 }, () => t.http.post('/v1/reserved-ips').set(bearer(token)).send({ region: 'id-jkt', term_months: 1, currency: 'USD' })),
    );
    const accepted = results.filter((r) => r.status === 202);
    const refused = results.filter((r) => r.status !== 202);
    expect(accepted).toHaveLength(20);
    expect(refused.map((r) => [r.status, r.body.error.code])).toEqual(Array(30).fill([409, 'out_of_stock']));
    const ips = accepted.map((r) => r.body.reserved_ip.ip as string);
    expect(new Set(ips).size).toBe(20);
    expect(await t.sql(`SELECT count(*)::int AS n FROM reserved_ips`)).toEqual([{ n: 20 }]);
    expect(await t.sql(`SELECT count(*)::int AS n FROM reserved_ip_pool WHERE region_id = 'id-jkt' AND reserved_ip_id IS NULL`)).toEqual([{ n: 0 }]);
    expect(await t.sql(`SELECT reserved::text AS reserved FROM wallet_balances WHERE org_id = 'org_kr' AND currency = 'USD'`)).toEqual([{ reserved: '2000000' }]);
    expect(await t.app.get(AdvanceOperations).runUntilIdle()).toMatchObject({ succeeded: 20, failed: 0 });
  }, scaled(120_000));

  it('a worker SIGKILLed mid-assignment: every ip.assign ends, each address routed once to its server, verify clean', async () => {
    const reserve = await Promise.all(
      Array.from({ length: N }, () => t.http.post('/v1/reserved-ips').set(bearer(token)).send({ region: 'sg-sin', term_months: 1, currency: 'USD' })),
    );
    expect(reserve.map((r) => r.status)).toEqual(Array(N).fill(202));
    expect(await t.app.get(AdvanceOperations).runUntilIdle()).toMatchObject({ succeeded: N, failed: 0 });
    const ids = reserve.map((r) => r.body.reserved_ip.id as string);
    const api = await workers.api();
    const assigned = await Promise.all(
      ids.map(async (id, i) => {
        const res = await validatedFetch(`${api.url}/v1/reserved-ips/${id}/assign`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ server_id: `vm_krs${i + 1}` }),
        });
        return res.status;
      }),
    );
    expect(assigned).toEqual(Array(N).fill(202));
    await workers.killMidStepAndFinish(t.sql, 1);

    expect(await t.sql(`SELECT type, status, count(*)::int AS n FROM operations GROUP BY type, status ORDER BY type`)).toEqual([
      { type: 'ip.assign', status: 'succeeded', n: N },
      { type: 'ip.reserve', status: 'succeeded', n: 20 + N },
    ]);
    const expected = ids.map((id, i) => ({ id, server_id: `vm_krs${i + 1}` })).sort((a, b) => (a.id < b.id ? -1 : 1));
    expect(await t.sql(`SELECT id, server_id FROM reserved_ips WHERE status = 'assigned' ORDER BY id COLLATE "C"`)).toEqual(expected);
    // At the provider: each address routed once, to its server; one recorded call per address and step.
    expect(await t.sql(`SELECT address_id AS id, server_id FROM provider_addresses WHERE server_id IS NOT NULL ORDER BY address_id COLLATE "C"`)).toEqual(expected);
    expect(await t.sql(`SELECT count(*)::int AS n FROM provider_address_calls`)).toEqual([{ n: N }]);
    // No charge for an assignment.
    expect(await t.sql(`SELECT count(*)::int AS n FROM wallet_ledger l JOIN operations o ON o.id = l.operation_id WHERE o.type = 'ip.assign'`)).toEqual([{ n: 0 }]);
    expectInvariantsHold(t.settings.databaseUrl);
  }, scaled(180_000));
});
