import { VerifyInvariants } from '../../src/modules/verification/application/verify-invariants.use-case';
import { SetPurchasesPaused } from '../../src/modules/options/application/catalog-admin.use-cases';
import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { ComputeGateway } from '../../src/modules/servers/application/compute-gateway';
import { StepUnavailable } from '../../src/modules/operations/application/operation-executors';
import { FixedClock } from '../../src/shared/kernel/clock/clock';
import { DomainError } from '../../src/shared/kernel/errors/domain-error';
import { errorBody } from '../support/assertions';
import { apiToken, bearer, organization } from '../support/fixtures';
import { setComputeProviderDown } from '../support/provider';
import { IMAGES, OP_ID, SERVER_PLANS, serverRegion } from '../support/servers';
import { TestApp, startTestApp } from '../support/test-app';

const NOW = '2026-11-23T10:00:00.000Z';

/**
 * The server actions (servers.md "Power, renewal"): start, stop (graceful, forced, ACPI ignored),
 * reboot (soft, hard), renew; each 202 with its whole body, the status at acceptance, the worker's
 * steps and result, the status reached, the provider's instance; the 409s in their order
 * (unfinished operation first, with details.operation_id), 404, 402, 503 while the compute
 * provider is down (nothing recorded), purchases paused by the CLI, and failures giving back
 * vCPUs and the hold.
 */
describe('server actions', () => {
  let t: TestApp;
  let advance: AdvanceOperations;
  let gateway: ComputeGateway;
  const clock = new FixedClock(new Date(NOW));
  const rw = bearer(apiToken('sa', 'rw'));
  let serverId: string;
  let created: Record<string, unknown>;

  beforeAll(async () => {
    t = await startTestApp({}, clock);
    await t.seed({
      server_plans: SERVER_PLANS,
      images: IMAGES,
      regions: [serverRegion('id-jkt', 256)],
      organizations: [organization('sa', { wallet: { USD: '100.00000', IDR: '1500000' } })],
    });
    advance = t.app.get(AdvanceOperations);
    gateway = t.app.get(ComputeGateway);
    const res = await t.http.post('/v1/servers').set(rw).send({ name: 'app-1', region: 'id-jkt', plan: 'cx1', image: 'debian-12', term_months: 1, currency: 'USD' });
    expect(res.status).toBe(202);
    serverId = res.body.server.id;
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1 });
    created = (await t.http.get(`/v1/servers/${serverId}`).set(rw)).body;
    expect(created).toMatchObject({ status: 'running', ipv4: expect.any(String), expires_at: '2026-12-23T10:00:00.000Z' });
  });
  afterAll(async () => t?.close());

  const post = (path: string, body?: object) => {
    const req = t.http.post(path).set(rw);
    return body === undefined ? req : req.send(body);
  };
  const power = async () => (await t.sql<{ power: string }>('SELECT power FROM provider_instances WHERE server_id = $1 AND deleted_at IS NULL', [serverId]))[0]?.power;
  const status = async () => (await t.http.get(`/v1/servers/${serverId}`).set(rw)).body.status;
  const opCount = async () => (await t.sql<{ n: number }>('SELECT count(*)::int AS n FROM operations'))[0].n;
  const audits = (action: string) => t.sql<{ data: object }>(`SELECT data FROM audit_log WHERE action = $1 ORDER BY seq`, [action]);

  /** Accepts the action, checks the 202, runs the worker and answers the ended operation. */
  async function act(path: string, body: object | undefined, during: string, steps: string[]) {
    const res = await post(`/v1/servers/${serverId}/${path}`, body);
    expect(res.status).toBe(202);
    const opId = res.body.operation.id;
    expect(res.headers.location).toBe(`/v1/operations/${opId}`);
    expect(res.body.server).toEqual({ ...created, status: during });
    expect(res.body.operation).toEqual({
      id: expect.stringMatching(OP_ID),
      type: `vm.${path}`,
      status: 'pending',
      vm_id: serverId,
      steps: steps.map((name) => ({ name, status: 'pending' })),
      result: null,
      error: null,
      created_at: clock.now().toISOString(),
      finished_at: null,
    });
    expect(await status()).toBe(during);
    await advance.runUntilIdle();
    return { opId, op: (await t.http.get(`/v1/operations/${opId}`).set(rw)).body };
  }

  it('stop (ACPI): stopping → stopped, step shutting_down, result {server_id, status, forced: false}; audited', async () => {
    const { opId, op } = await act('stop', undefined, 'stopping', ['shutting_down']);
    expect(op).toMatchObject({ status: 'succeeded', steps: [{ name: 'shutting_down', status: 'succeeded' }], result: { server_id: serverId, status: 'stopped', forced: false }, error: null });
    expect(Object.keys(op.result)).toEqual(['server_id', 'status', 'forced'].sort((a, b) => a.length - b.length || (a < b ? -1 : 1)));
    expect(await status()).toBe('stopped');
    expect(await power()).toBe('stopped');
    expect(await audits('server.stop')).toEqual([{ data: { operation_id: opId, force: false } }]);
  });

  it('409 invalid_state: stop of a stopped server, reboot of a stopped one', async () => {
    const before = await opCount();
    const stop = await post(`/v1/servers/${serverId}/stop`, {});
    expect(stop.body).toEqual(errorBody(stop, 'invalid_state', `Server ${serverId} is stopped; vm.stop needs it running`));
    const reboot = await post(`/v1/servers/${serverId}/reboot`, { hard: true });
    expect(reboot.body).toEqual(errorBody(reboot, 'invalid_state', `Server ${serverId} is stopped; vm.reboot needs it running`));
    expect(await opCount()).toBe(before);
  });

  it('start: starting → running, steps powering_on, booting, result {server_id, status}; the ipv4 is kept', async () => {
    const { op } = await act('start', undefined, 'starting', ['powering_on', 'booting']);
    expect(op).toMatchObject({ status: 'succeeded', steps: [{ name: 'powering_on', status: 'succeeded' }, { name: 'booting', status: 'succeeded' }] });
    expect(op.result).toEqual({ server_id: serverId, status: 'running' });
    expect((await t.http.get(`/v1/servers/${serverId}`).set(rw)).body).toEqual(created);
    expect(await power()).toBe('running');
  });

  it('reboot (soft then hard): rebooting → running; steps rebooting|resetting, booting; result hard', async () => {
    const soft = await act('reboot', {}, 'rebooting', ['rebooting', 'booting']);
    expect(soft.op).toMatchObject({ status: 'succeeded', result: { server_id: serverId, status: 'running', hard: false } });
    const hard = await act('reboot', { hard: true }, 'rebooting', ['resetting', 'booting']);
    expect(hard.op).toMatchObject({ status: 'succeeded', steps: [{ name: 'resetting', status: 'succeeded' }, { name: 'booting', status: 'succeeded' }], result: { server_id: serverId, status: 'running', hard: true } });
    expect(await status()).toBe('running');
    expect((await audits('server.reboot')).map((a) => (a.data as { hard: boolean }).hard)).toEqual([false, true]);
  });

  it('stop with an ACPI-ignoring guest fails with invalid_state ("stop with force"); the server stays running; force then stops it', async () => {
    await t.sql('UPDATE provider_instances SET ignores_acpi = true WHERE server_id = $1', [serverId]);
    const { op } = await act('stop', { force: false }, 'stopping', ['shutting_down']);
    expect(op).toMatchObject({ status: 'failed', steps: [{ name: 'shutting_down', status: 'failed' }], result: null, error: { code: 'invalid_state', message: expect.stringMatching(/force/) } });
    expect(await status()).toBe('running');
    expect(await power()).toBe('running');
    const forced = await act('stop', { force: true }, 'stopping', ['powering_off']);
    expect(forced.op).toMatchObject({ status: 'succeeded', steps: [{ name: 'powering_off', status: 'succeeded' }], result: { server_id: serverId, status: 'stopped', forced: true } });
    expect(await power()).toBe('stopped');
    await t.sql('UPDATE provider_instances SET ignores_acpi = false WHERE server_id = $1', [serverId]);
    await act('start', undefined, 'starting', ['powering_on', 'booting']);
  });

  it('400 for a wrong flag type; an unfinished operation is 409 with details.operation_id, before the status rule', async () => {
    const bad = await post(`/v1/servers/${serverId}/stop`, { force: 'yes' });
    expect(bad.body).toEqual(errorBody(bad, 'invalid_request', 'force must be true or false', { field: 'force' }));
    const first = await post(`/v1/servers/${serverId}/reboot`);
    expect(first.status).toBe(202);
    const opId = first.body.operation.id;
    // start would also break the status rule (the server is rebooting): the operation is named first.
    for (const [path, body] of [['start', undefined], ['stop', { force: true }], ['reboot', undefined], ['renew', { term_months: 1 }]] as const) {
      const res = await post(`/v1/servers/${serverId}/${path}`, body);
      expect({ path, body: res.body }).toEqual({ path, body: errorBody(res, 'invalid_state', `Server ${serverId} has an operation pending or running (${opId}); wait for it to end`, { operation_id: opId }) });
    }
    await advance.runUntilIdle();
    expect(await status()).toBe('running');
  });

  it('renew: the hold at the frozen price, then term, billing and expiry from max(expires_at, now); currency defaults to billing', async () => {
    const before = await t.sql('SELECT currency, available::text, reserved::text FROM wallet_balances WHERE org_id = $1 ORDER BY currency', ['org_sa']);
    const res = await post(`/v1/servers/${serverId}/renew`, { term_months: 3, currency: 'IDR' });
    expect(res.status).toBe(202);
    const opId = res.body.operation.id;
    expect(res.body).toEqual({
      server: created,
      operation: { id: opId, type: 'vm.renew', status: 'pending', vm_id: serverId, steps: [{ name: 'renewing', status: 'running' }], result: null, error: null, created_at: NOW, finished_at: null },
    });
    expect(await t.sql(`SELECT kind, currency, amount::text FROM wallet_ledger WHERE operation_id = $1`, [opId])).toEqual([{ kind: 'hold', currency: 'IDR', amount: '216000' }]);
    await advance.runUntilIdle();
    const op = (await t.http.get(`/v1/operations/${opId}`).set(rw)).body;
    expect(op).toEqual({
      ...res.body.operation,
      status: 'succeeded',
      steps: [{ name: 'renewing', status: 'succeeded' }],
      result: { server_id: serverId, term_months: 3, expires_at: '2027-03-23T10:00:00.000Z', charged: { currency: 'IDR', amount: '216000' } },
      finished_at: NOW,
    });
    expect((await t.http.get(`/v1/servers/${serverId}`).set(rw)).body).toEqual({
      ...created, term_months: 3, billing: { currency: 'IDR', amount: '216000' }, expires_at: '2027-03-23T10:00:00.000Z',
    });
    expect(await t.sql('SELECT currency, available::text, reserved::text FROM wallet_balances WHERE org_id = $1 ORDER BY currency', ['org_sa'])).toEqual(
      (before as { currency: string; available: string; reserved: string }[]).map((b) => (b.currency === 'IDR' ? { ...b, available: String(Number(b.available) - 216000) } : b)),
    );
    // Without currency: the billing currency (now IDR); 402 when the wallet cannot cover it.
    const [idr] = await t.sql<{ a: string }>(`SELECT available::text AS a FROM wallet_balances WHERE org_id = 'org_sa' AND currency = 'IDR'`);
    await t.sql(`UPDATE wallet_balances SET available = 1000 WHERE org_id = 'org_sa' AND currency = 'IDR'`);
    const poor = await post(`/v1/servers/${serverId}/renew`, { term_months: 12 });
    await t.sql(`UPDATE wallet_balances SET available = $1 WHERE org_id = 'org_sa' AND currency = 'IDR'`, [idr.a]);
    expect(poor.status).toBe(402);
    expect(poor.body).toEqual(errorBody(poor, 'insufficient_balance', 'The wallet cannot cover 864000 IDR; available: 1000 IDR', { required: '864000', available: '1000', currency: 'IDR' }));
    expect(await audits('server.renew')).toEqual([{ data: { operation_id: opId, term_months: 3, currency: 'IDR', amount: '216000' } }]);
    created = (await t.http.get(`/v1/servers/${serverId}`).set(rw)).body;
  });

  it('renew of a seeded server: 409 invalid_state; unknown server: 404; a deleted server: 409', async () => {
    const seeded = await post('/v1/servers/vm_saweb1/renew', { term_months: 1 });
    expect(seeded.body).toEqual(errorBody(seeded, 'invalid_state', 'Server vm_saweb1 was not bought here (a seeded server) and cannot be renewed'));
    const unknown = await post('/v1/servers/vm_nope/start');
    expect(unknown.body).toEqual(errorBody(unknown, 'not_found', 'Server vm_nope not found'));
    await t.sql(`INSERT INTO servers (id, org_id, name, region_id, zone_id, status, deleted_at) VALUES ('vm_sagone', 'org_sa', 'gone', 'id-jkt', 'id-jkt-a', 'deleted', now())`);
    const gone = await post('/v1/servers/vm_sagone/reboot');
    expect(gone.body).toEqual(errorBody(gone, 'invalid_state', 'Server vm_sagone is deleted'));
  });

  it('seeded servers take power actions (adopted by the simulator)', async () => {
    const res = await post('/v1/servers/vm_saweb1/reboot', { hard: true });
    expect(res.status).toBe(202);
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1 });
    expect((await t.http.get(`/v1/operations/${res.body.operation.id}`).set(rw)).body.result).toEqual({ server_id: 'vm_saweb1', status: 'running', hard: true });
  });

  it('while the compute provider is down: purchases and power actions 503, nothing recorded; renewals still accepted', async () => {
    await setComputeProviderDown(t, true);
    try {
      const before = await opCount();
      const balances = await t.sql('SELECT * FROM wallet_balances ORDER BY org_id, currency');
      const buy = await post('/v1/servers', { name: 'app-2', region: 'id-jkt', plan: 'cx1', image: 'debian-12', term_months: 1, currency: 'USD' });
      expect(buy.status).toBe(503);
      expect(buy.body).toEqual(errorBody(buy, 'provider_unavailable', 'The compute provider is unavailable; nothing was recorded. Retry later'));
      const stop = await post(`/v1/servers/${serverId}/stop`);
      expect(stop.body).toEqual(errorBody(stop, 'provider_unavailable', 'The compute provider is unavailable; nothing was recorded. Retry later'));
      expect(await opCount()).toBe(before);
      expect(await t.sql('SELECT * FROM wallet_balances ORDER BY org_id, currency')).toEqual(balances);
      expect(await status()).toBe('running');
      expect((await t.sql<{ u: string }>(`SELECT vcpus_used::text AS u FROM region_usage WHERE id = 'id-jkt'`))[0].u).toBe('1');
      const renew = await post(`/v1/servers/${serverId}/renew`, { term_months: 1, currency: 'USD' });
      expect(renew.status).toBe(202);
      await advance.runUntilIdle();
    } finally {
      await setComputeProviderDown(t, false);
    }
  });

  it("purchases paused (the CLI's purchases:pause use case): 503 purchases_paused (before 409 and 402), nothing reserved; resumed: accepted", async () => {
    await t.app.get(SetPurchasesPaused).execute({ regionId: 'id-jkt', paused: true });
    const before = await opCount();
    const res = await post('/v1/servers', { name: 'app-1', region: 'id-jkt', plan: 'cx1', image: 'debian-12', term_months: 12, currency: 'IDR' });
    expect(res.status).toBe(503);
    expect(res.body).toEqual(errorBody(res, 'purchases_paused', 'Server purchases are paused in id-jkt at the moment; nothing was reserved. Retry later'));
    expect(await opCount()).toBe(before);
    await t.app.get(SetPurchasesPaused).execute({ regionId: 'id-jkt', paused: false });
    const ok = await post('/v1/servers', { name: 'app-3', region: 'id-jkt', plan: 'cx1', image: 'debian-12', term_months: 1, currency: 'USD' });
    expect(ok.status).toBe(202);
    await advance.runUntilIdle();
  });

  it('GET /v1/operations?vm_id= lists the server\'s operations, newest first; deployment_id filters template operations', async () => {
    const res = await t.http.get(`/v1/operations?vm_id=${serverId}&limit=100`).set(rw);
    expect(res.status).toBe(200);
    const ids = (await t.sql<{ id: string }>(`SELECT id FROM operations WHERE vm_id = $1 ORDER BY created_at DESC, id DESC`, [serverId])).map((r) => r.id);
    expect(ids.length).toBeGreaterThan(5);
    expect(res.body.operations.map((o: { id: string }) => o.id)).toEqual(ids);
    expect(new Set(res.body.operations.map((o: { vm_id: string }) => o.vm_id))).toEqual(new Set([serverId]));
    const none = await t.http.get('/v1/operations?deployment_id=dep_nope').set(rw);
    expect(none.body).toEqual({ operations: [], next_cursor: null });
  });

  it('cli verify: after this traffic every check holds; a bought server that lost its ipv4 is named by servers.purchase_captured_once', async () => {
    const verify = t.app.get(VerifyInvariants);
    const clean = await verify.execute();
    expect(clean.violations).toEqual([]);
    expect(clean.checks.filter((c) => c.name.startsWith('servers.') || c.name.startsWith('regions.vcpus')).map((c) => [c.name, c.violations])).toEqual([
      ['servers.within_per_server_limit', 0],
      ['regions.vcpus_used_matches_servers', 0],
      ['servers.no_disk_on_deleted_server', 0],
      ['servers.deleted_by_succeeded_delete', 0],
      ['servers.deleting_has_operation', 0],
      ['servers.one_unfinished_operation', 0],
      ['servers.purchase_captured_once', 0],
      ['servers.ipv6_unique_in_region_prefix', 0],
    ]);
    const [op] = await t.sql<{ id: string }>(`SELECT id FROM operations WHERE type = 'vm.create' AND vm_id = $1`, [serverId]);
    const ipv4 = created.ipv4;
    await t.sql('UPDATE servers SET ipv4 = NULL WHERE id = $1', [serverId]);
    try {
      const broken = await verify.execute();
      // provider.instances_match_servers names it too (its instance has an address); the servers.* checks:
      expect(broken.violations.filter((v) => v.check.startsWith('servers.'))).toEqual([
        {
          check: 'servers.purchase_captured_once',
          subject: op.id,
          message: `vm.create of ${serverId}: 1 holds, 1 captures (450000), 0 releases, and its live server has no ipv4`,
          details: { server_id: serverId, holds: 1, captures: 1, releases: 0, captured: '450000' },
        },
      ]);
    } finally {
      await t.sql('UPDATE servers SET ipv4 = $2 WHERE id = $1', [serverId, ipv4]);
    }
  });

  describe('a failed purchase gives back vCPUs and the hold, and deletes any instance made', () => {
    const vcpus = async () => (await t.sql<{ u: string }>(`SELECT vcpus_used::text AS u FROM region_usage WHERE id = 'id-jkt'`))[0].u;
    const usd = async () => (await t.sql<{ a: string; r: string }>(`SELECT available::text AS a, reserved::text AS r FROM wallet_balances WHERE org_id = 'org_sa' AND currency = 'USD'`))[0];

    it('booting fails (a forced failing step): the instance made is deleted, the server deleted, vCPUs and hold back, the quote used', async () => {
      const quote = await post('/v1/quotes', { region: 'id-jkt', plan: 'cx4', term_months: 1, currency: 'USD' });
      expect(quote.status).toBe(201);
      const beforeVcpus = await vcpus();
      const beforeUsd = await usd();
      const res = await post('/v1/servers', { name: 'doomed', region: 'id-jkt', plan: 'cx4', image: 'debian-12', term_months: 1, currency: 'USD', quote_id: quote.body.id, user_data: 'secret-ish' });
      expect(res.status).toBe(202);
      const id = res.body.server.id;
      expect(await vcpus()).toBe(String(Number(beforeVcpus) + 4));
      const spy = jest.spyOn(gateway, 'awaitBoot').mockRejectedValueOnce(new DomainError('internal', 'The instance did not boot'));
      try {
        await advance.runUntilIdle();
      } finally {
        spy.mockRestore();
      }
      const op = (await t.http.get(`/v1/operations/${res.body.operation.id}`).set(rw)).body;
      expect(op).toMatchObject({
        status: 'failed',
        steps: [
          { name: 'payment_reserved', status: 'succeeded' },
          { name: 'creating_instance', status: 'succeeded' },
          { name: 'booting', status: 'failed' },
          { name: 'ready', status: 'pending' },
        ],
        result: null,
        error: { code: 'internal', message: 'The instance did not boot' },
      });
      expect((await t.http.get(`/v1/servers/${id}`).set(rw)).body).toMatchObject({ status: 'deleted', ipv4: null, deleted_at: expect.any(String) });
      expect(await vcpus()).toBe(beforeVcpus);
      expect(await usd()).toEqual(beforeUsd);
      expect(await t.sql(`SELECT kind FROM wallet_ledger WHERE operation_id = $1 ORDER BY id`, [res.body.operation.id])).toEqual([{ kind: 'hold' }, { kind: 'release' }]);
      expect(await gateway.getInstance(id)).toBeNull();
      expect((await t.http.get(`/v1/quotes/${quote.body.id}`).set(rw)).body.used_at).toBe(NOW);
      const [params] = await t.sql<{ params: object }>('SELECT params FROM operations WHERE id = $1', [res.body.operation.id]);
      expect(params.params).not.toHaveProperty('user_data');
    });

    it('creating_instance whose answer is lost until the retry window closes: the provider is read, the instance made is deleted', async () => {
      const window = t.settings.providerRetryWindowMs;
      t.settings.providerRetryWindowMs = 0;
      const beforeVcpus = await vcpus();
      const beforeUsd = await usd();
      const res = await post('/v1/servers', { name: 'lost', region: 'id-jkt', plan: 'cx2', image: 'debian-12', term_months: 1, currency: 'USD' });
      const id = res.body.server.id;
      const real = gateway.createInstance.bind(gateway);
      const spy = jest.spyOn(gateway, 'createInstance').mockImplementation(async (input) => {
        await real(input);
        // What the gateway's circuit makes of the adapter's ComputeUnavailable.
        throw new StepUnavailable('The compute provider took the call but its answer was lost');
      });
      try {
                await advance.runUntilIdle();
      } finally {
        spy.mockRestore();
        t.settings.providerRetryWindowMs = window;
      }
      const op = (await t.http.get(`/v1/operations/${res.body.operation.id}`).set(rw)).body;
      expect(op).toMatchObject({ status: 'failed', error: { code: 'provider_unavailable' }, steps: [{ status: 'succeeded' }, { name: 'creating_instance', status: 'failed' }, { status: 'pending' }, { status: 'pending' }] });
      expect(await gateway.getInstance(id)).toBeNull();
      expect(await vcpus()).toBe(beforeVcpus);
      expect(await usd()).toEqual(beforeUsd);
      expect((await t.http.get(`/v1/servers/${id}`).set(rw)).body.status).toBe('deleted');
    });
  });
});
