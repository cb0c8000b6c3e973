import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { StepUnavailable } from '../../src/modules/operations/application/operation-executors';
import { ComputeGateway } from '../../src/modules/servers/application/compute-gateway';
import { ExpireTerms } from '../../src/modules/terms/application/expire-terms.use-case';
import { FixedClock } from '../../src/shared/kernel/clock/clock';
import { apiToken, bearer, organization } from '../support/fixtures';
import { IMAGES, SERVER_PLANS, serverRegion } from '../support/servers';
import { TestApp, startTestApp } from '../support/test-app';

const NOW = '2026-11-23T10:00:00.000Z';
const at = (iso: string, ms: number) => new Date(new Date(iso).getTime() + ms).toISOString();

/**
 * terms.md "Expiry: suspension", the worker's chunk of vm.suspend operations (their power-offs
 * made side by side, their steps committed together): one whose answer is lost (the provider
 * powered the instance off, the gateway reports it unavailable) has its step deferred while the
 * others of the chunk succeed; at the retry the provider's truth decides (the instance is off:
 * no call more), and it succeeds. Each instance powered off once.
 */
describe('terms: vm.suspend in the worker\'s chunks', () => {
  let t: TestApp;
  let advance: AdvanceOperations;
  let expire: ExpireTerms;
  let gateway: ComputeGateway;
  const clock = new FixedClock(new Date(NOW));
  const rw = bearer(apiToken('tsb', 'rw'));
  const ids: string[] = [];

  beforeAll(async () => {
    t = await startTestApp({ serverRetentionS: 600 }, clock);
    await t.seed({
      server_plans: SERVER_PLANS,
      images: IMAGES,
      regions: [serverRegion('id-jkt', 256)],
      organizations: [{ ...organization('tsb'), volumes: [] }],
    });
    advance = t.app.get(AdvanceOperations);
    expire = t.app.get(ExpireTerms);
    gateway = t.app.get(ComputeGateway);
    for (const name of ['app-1', 'app-2', 'app-3']) {
      const res = await t.http.post('/v1/servers').set(rw).send({ name, region: 'id-jkt', plan: 'cx1', image: 'debian-12', term_months: 1, currency: 'USD' });
      expect(res.status).toBe(202);
      ids.push(res.body.server.id);
    }
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 3 });
  });
  afterAll(async () => t?.close());

  const power = async (id: string) => (await t.sql<{ power: string }>('SELECT power FROM provider_instances WHERE server_id = $1 AND deleted_at IS NULL', [id]))[0]?.power;
  const operationOf = async (id: string) => {
    const [row] = await t.sql<{ id: string }>(`SELECT id FROM operations WHERE vm_id = $1 AND type = 'vm.suspend'`, [id]);
    return (await t.http.get(`/v1/operations/${row.id}`).set(rw)).body;
  };

  it('a lost answer defers that server\'s step while the rest of the chunk succeeds; the retry reads the instance off and ends it', async () => {
    const expiresAt = (await t.http.get(`/v1/servers/${ids[0]}`).set(rw)).body.expires_at;
    clock.set(new Date(expiresAt));
    expect(await expire.execute()).toBe(3);
    const lost = ids[1];
    const real = gateway.shutdown.bind(gateway);
    const shutdown = jest.spyOn(gateway, 'shutdown').mockImplementation(async (input) => {
      const instance = await real(input);
      if (input.serverId === lost) throw new StepUnavailable('The compute provider took the call but its answer was lost', 'provider_unavailable', 'compute provider');
      return instance;
    });
    try {
      expect(await advance.runUntilIdle()).toEqual({ claimed: 3, succeeded: 2, failed: 0, skipped: 1 });
      expect(shutdown.mock.calls.map(([input]) => input.serverId).sort()).toEqual([...ids].sort());
      for (const id of ids) expect(await power(id)).toBe('stopped');
      const deferred = await operationOf(lost);
      expect(deferred).toMatchObject({ status: 'running', steps: [{ name: 'powering_off', status: 'running' }], result: null, error: null, finished_at: null });
      for (const id of ids.filter((i) => i !== lost)) {
        expect(await operationOf(id)).toMatchObject({
          status: 'succeeded',
          steps: [{ name: 'powering_off', status: 'succeeded' }],
          result: { server_id: id, suspended_at: expiresAt, power_before: 'running' },
          finished_at: expiresAt,
        });
      }
      // Before its retry time nothing claims it; after, the step reads the instance (off): no second call.
      expect(await advance.runUntilIdle()).toMatchObject({ claimed: 0 });
      clock.set(new Date(at(expiresAt, t.settings.providerRetryBaseMs + 1)));
      expect(await advance.runUntilIdle()).toEqual({ claimed: 1, succeeded: 1, failed: 0, skipped: 0 });
      expect(shutdown).toHaveBeenCalledTimes(3);
    } finally {
      shutdown.mockRestore();
    }
    expect(await operationOf(lost)).toMatchObject({
      status: 'succeeded',
      steps: [{ name: 'powering_off', status: 'succeeded' }],
      result: { server_id: lost, suspended_at: expiresAt, power_before: 'running' },
      error: null,
    });
    for (const id of ids) {
      expect((await t.http.get(`/v1/servers/${id}`).set(rw)).body).toMatchObject({ status: 'suspended', suspended_at: expiresAt });
      expect(await power(id)).toBe('stopped');
    }
  });
});
