import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { expectOneAcceptedOthersReplayed } from '../support/assertions';
import { usingPostgres } from '../support/database';
import { apiToken, bearer, organization } from '../support/fixtures';
import { IMAGES, SERVER_PLANS, serverRegion } from '../support/servers';
import { TestApp, startTestApp } from '../support/test-app';

/**
 * Races on servers (servers.md): the last vCPUs of a region (the counter's CHECK), the last of an
 * organization's 25 servers (counted under the organization row's lock), and two power actions on
 * one server (one unfinished vm.* operation per server). Only PostgreSQL runs transactions
 * concurrently; the embedded engine serialises them, so nothing would race there.
 */
const describeOnPostgres = usingPostgres() ? describe : describe.skip;
if (!usingPostgres()) {
  console.log('server-concurrency.e2e-spec: skipped, needs DATABASE_URL (PostgreSQL); the embedded engine serialises transactions');
}

describeOnPostgres('servers under concurrency (PostgreSQL)', () => {
  let t: TestApp;
  const wallet = { USD: '10000.00000', IDR: '0' };

  beforeAll(async () => {
    t = await startTestApp({ dbPoolSize: 20 });
    await t.seed({
      server_plans: SERVER_PLANS,
      images: IMAGES,
      // sg-sin: 10 vCPUs, room for 5 cx2 (2 vCPUs each).
      regions: [serverRegion('id-jkt', 1000), serverRegion('sg-sin', 10)],
      organizations: [
        organization('ka', { wallet }),
        organization('kb', { wallet, volumes: [], servers: Array.from({ length: 20 }, (_, i) => ({ id: `vm_kb${i}`, name: `s-${i}`, region: 'id-jkt', zone: 'id-jkt-a' })) }),
        organization('kc', {
          wallet,
          servers: Array.from({ length: 8 }, (_, i) => ({ id: `vm_kc${i}`, name: `d-${i}`, region: 'id-jkt', zone: 'id-jkt-a' })),
          volumes: Array.from({ length: 8 }, (_, i) => ({
            id: `vol_kc${i}`, name: `disk-${i}`, type: 'premium', region: 'id-jkt', zone: 'id-jkt-a', size_gb: 10, term_months: 1, currency: 'USD',
            server: `vm_kc${i}`, mount_path: '/mnt/data', expires_at: '2026-12-21T00:00:00.000Z', note: null,
          })),
        }),
      ],
    });
  });
  afterAll(async () => t?.close());

  const buy = (org: string, body: object) => t.http.post('/v1/servers').set(bearer(apiToken(org, 'rw'))).send(body);
  const base = { image: 'debian-12', term_months: 1, currency: 'USD' };

  it('20 concurrent purchases for a region with vCPUs for 5: exactly 5 accepted, the rest 409 out_of_stock; the counter is the live servers\' vCPUs', async () => {
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => buy('ka', { ...base, name: `race-${i}`, region: 'sg-sin', plan: 'cx2' })));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([...Array(5).fill(202), ...Array(15).fill(409)]);
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.error).toMatchObject({ code: 'out_of_stock', details: {} });
    const [row] = await t.sql<{ used: string; live: string; holds: number }>(
      `SELECT r.vcpus_used::text AS used, (SELECT coalesce(sum(vcpus), 0)::text FROM servers WHERE region_id = 'sg-sin' AND deleted_at IS NULL) AS live,
              (SELECT count(*)::int FROM wallet_ledger l JOIN operations o ON o.id = l.operation_id WHERE o.type = 'vm.create' AND l.kind = 'hold') AS holds
         FROM region_usage r WHERE r.id = 'sg-sin'`,
    );
    expect(row).toEqual({ used: '10', live: '10', holds: 5 });
  });

  it('30 concurrent purchases by an organization with 20 servers: exactly 5 accepted, the rest 409 quota_exceeded', async () => {
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => buy('kb', { ...base, name: `q-${i}`, region: 'id-jkt', plan: 'cx1' })));
    expect(results.map((r) => r.status).sort()).toEqual([...Array(5).fill(202), ...Array(25).fill(409)]);
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.error).toMatchObject({ code: 'quota_exceeded', details: { limit: 25 } });
    expect((await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM servers WHERE org_id = 'org_kb' AND deleted_at IS NULL`))[0].n).toBe(25);
  });

  it('two concurrent power actions on one server: exactly one accepted, the other 409 invalid_state naming it', async () => {
    await t.app.get(AdvanceOperations).runUntilIdle();
    const key = bearer(apiToken('ka', 'rw'));
    for (let round = 0; round < 5; round++) {
      const [a, b] = await Promise.all([
        t.http.post('/v1/servers/vm_kaweb1/reboot').set(key),
        t.http.post('/v1/servers/vm_kaweb1/stop').set(key).send({ force: true }),
      ]);
      const accepted = [a, b].filter((r) => r.status === 202);
      const refused = [a, b].filter((r) => r.status === 409);
      expect({ accepted: accepted.length, refused: refused.length }).toEqual({ accepted: 1, refused: 1 });
      expect(refused[0].body.error).toMatchObject({ code: 'invalid_state', details: { operation_id: accepted[0].body.operation.id } });
      expect((await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM operations WHERE vm_id = 'vm_kaweb1' AND status IN ('pending', 'running')`))[0].n).toBe(1);
      await t.app.get(AdvanceOperations).runUntilIdle();
      if (accepted[0].body.operation.type === 'vm.stop') {
        await t.http.post('/v1/servers/vm_kaweb1/start').set(key);
        await t.app.get(AdvanceOperations).runUntilIdle();
      }
    }
  });

  it("a detach and a delete of the server at once on a server's disk: when the delete wins, the detach's 409 names its vm.delete (details.operation_id)", async () => {
    const key = bearer(apiToken('kc', 'rw'));
    let deleteWon = 0;
    for (let i = 0; i < 8; i++) {
      const [detach, remove] = await Promise.all([t.http.post(`/v1/volumes/vol_kc${i}/detach`).set(key), t.http.delete(`/v1/servers/vm_kc${i}`).set(key)]);
      if (remove.status === 202 && detach.status === 409) {
        deleteWon++;
        const opId = remove.body.operation.id;
        expect(detach.body.error).toEqual({
          code: 'invalid_state',
          message: `Volume vol_kc${i} is on server vm_kc${i}, which is being deleted (${opId}); the deletion detaches it`,
          request_id: detach.headers['x-request-id'],
          details: { operation_id: opId },
        });
      } else {
        // The detach won: the delete waits for it (409 naming the detach), or came after it ended.
        expect(detach.status).toBe(202);
        if (remove.status === 409) expect(remove.body.error.details).toEqual({ operation_id: detach.body.operation.id });
      }
    }
    expect(deleteWon).toBeGreaterThan(0);
  });

  it('8 concurrent identical purchases under one Idempotency-Key: one accepted, the others replay its answer; one server, operation, hold and audit entry', async () => {
    const body = { ...base, name: 'same-key', region: 'id-jkt', plan: 'cx1' };
    const results = await Promise.all(Array.from({ length: 8 }, () => t.http.post('/v1/servers').set(bearer(apiToken('ka', 'rw'))).set('Idempotency-Key', 'server-same-key-race').send(body)));
    expectOneAcceptedOthersReplayed(results);
    expect(
      await t.sql(
        `SELECT (SELECT count(*)::int FROM servers WHERE org_id = 'org_ka' AND name = 'same-key') AS servers,
                (SELECT count(*)::int FROM operations o JOIN servers s ON s.id = o.vm_id WHERE s.name = 'same-key' AND o.type = 'vm.create') AS operations,
                (SELECT count(*)::int FROM wallet_ledger l JOIN operations o ON o.id = l.operation_id JOIN servers s ON s.id = o.vm_id WHERE s.name = 'same-key' AND l.kind = 'hold') AS holds,
                (SELECT count(*)::int FROM audit_log a JOIN servers s ON s.id = a.target_id WHERE s.name = 'same-key' AND a.action = 'server.create') AS audited`,
      ),
    ).toEqual([{ servers: 1, operations: 1, holds: 1, audited: 1 }]);
  });
});
