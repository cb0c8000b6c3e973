import { SchedulerRegistry } from '@nestjs/schedule';
import { ComputeProvider } from '../../src/modules/servers/application/compute-provider.port';
import { ReconcileServersWithProvider } from '../../src/modules/servers/application/reconcile-servers.use-case';
import { apiToken, organization, region } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';
import { expectVerified } from '../support/verify';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/**
 * The servers' reconciliation sweep (ReconcileServersWithProvider): divergences planted through SQL
 * in the simulator's tables and the servers rows (answers lost after the call took effect) are
 * repaired forward-only from the instance, audited `server.reconciled`; a server with an unfinished
 * operation and a `creating` one are left alone; `cli verify` is clean afterwards.
 */
describe('the server reconciliation sweep', () => {
  let t: TestApp;
  let compute: ComputeProvider;
  let sweep: ReconcileServersWithProvider;

  /** A bought server (cx2, 2 vCPUs) in `status`, with a live running instance at the provider unless `instance` is false. */
  const bought = async (id: string, status: string, instance = true): Promise<string | null> => {
    let ipv4: string | null = null;
    if (instance) {
      const made = await compute.createInstance({
        serverId: id, step: `op_seed/${id}/creating_instance`, zoneId: 'id-jkt-a', vcpus: 2, memoryGb: 4, diskGb: 80, image: 'debian-12', sshPublicKeys: [], userData: null,
      });
      ipv4 = made.ipv4;
    }
    await t.sql(
      `INSERT INTO servers (id, org_id, name, status, region_id, zone_id, plan_id, vcpus, memory_gb, disk_gb, image_id, ipv4, term_months,
                            billing_currency, billing_amount, price_usd_minor, price_idr_minor, expires_at)
       VALUES ($1, 'org_rc', $2, $3, 'id-jkt', 'id-jkt-a', 'cx2', 2, 4, 80, 'debian-12', $4, 1, 'USD', 900, 900, 144000, now() + interval '30 days')`,
      [id, id.slice(3), status, ipv4],
    );
    return ipv4;
  };
  const row = (id: string) =>
    t.sql<Record<string, unknown>>(
      `SELECT status, ipv4, deleted_at IS NOT NULL AS deleted, instance_missing_since IS NOT NULL AS instance_missing FROM servers WHERE id = $1`,
      [id],
    ).then((r) => r[0]);
  const vcpusUsed = async () => (await t.sql<{ u: number }>(`SELECT vcpus_used::int AS u FROM region_usage WHERE id = 'id-jkt'`))[0].u;
  const audits = (id: string) =>
    t.sql<Record<string, unknown>>(
      `SELECT org_id, actor_type, actor_id, action, target_type, target_id, ip_address, request_id, data FROM audit_log
        WHERE action = 'server.reconciled' AND target_id = $1 ORDER BY created_at, public_id`,
      [id],
    );
  const instanceOf = async (id: string) =>
    (await t.sql<{ instance_id: string; ipv4: string }>(`SELECT instance_id, ipv4 FROM provider_instances WHERE server_id = $1 AND deleted_at IS NULL`, [id]))[0];
  const audit = (id: string, data: object) => ({
    org_id: 'org_rc', actor_type: 'system', actor_id: null, action: 'server.reconciled', target_type: 'server', target_id: id, ip_address: null, request_id: null, data,
  });

  beforeAll(async () => {
    t = await startTestApp();
    await t.seed({
      server_plans: [{ id: 'cx2', vcpus: 2, memory_gb: 4, disk_gb: 80 }],
      images: [{ id: 'debian-12', name: 'Debian 12', type: 'system' }],
      regions: [
        region('id-jkt', {
          zones: [{ id: 'id-jkt-a', available: true }],
          server_offer: { vcpu_capacity: 32, terms: [1], plans: [{ plan: 'cx2', price_per_month: { USD: '9.00000', IDR: '144000' } }] },
        }),
      ],
      organizations: [organization('rc', { servers: [{ id: 'vm_rcseeded', name: 'seeded-1', region: 'id-jkt', zone: 'id-jkt-a' }], volumes: [] })],
    });
    compute = t.app.get(ComputeProvider);
    sweep = t.app.get(ReconcileServersWithProvider);
  });
  afterAll(async () => t?.close());

  it('is scheduled (server-reconcile-sweep) only in a process that runs the worker', async () => {
    expect(t.app.get(SchedulerRegistry).doesExist('interval', 'server-reconcile-sweep')).toBe(false);
    const worker = await startTestApp({ workerEnabled: true, workerIntervalMs: 3_600_000 });
    try {
      expect(worker.app.get(SchedulerRegistry).doesExist('interval', 'server-reconcile-sweep')).toBe(true);
    } finally {
      await worker.close();
    }
  });

  it('repairs each divergence forward-only from the instance, audits it, leaves busy and creating servers alone (deleting ones are the deletion sweep\'s); verify is clean afterwards', async () => {
    // starting, the instance running: running.
    const startIp = await bought('vm_rcstart', 'starting');
    // running, the instance stopped: stopped; stopped, the instance running: running.
    const stopIp = await bought('vm_rcstop', 'running');
    await t.sql(`UPDATE provider_instances SET power = 'stopped' WHERE server_id = 'vm_rcstop' AND deleted_at IS NULL`);
    const runIp = await bought('vm_rcrun', 'stopped');
    // running, its instance gone: flagged, never invented.
    const goneIp = await bought('vm_rcgone', 'running');
    const goneInstance = await instanceOf('vm_rcgone');
    await t.sql(`UPDATE provider_instances SET deleted_at = now() WHERE server_id = 'vm_rcgone'`);
    // An unfinished vm.* operation: left alone whatever differs.
    const busyIp = await bought('vm_rcbusy', 'running');
    await t.sql(`UPDATE provider_instances SET power = 'stopped' WHERE server_id = 'vm_rcbusy' AND deleted_at IS NULL`);
    await t.sql(`INSERT INTO operations (id, org_id, type, status, vm_id, steps) VALUES ('op_rcbusy0000000000000000', 'org_rc', 'vm.reboot', 'running', 'vm_rcbusy', '[]')`);
    // creating with no operation and no instance: reported only.
    await bought('vm_rccreating', 'creating', false);
    expect(await vcpusUsed()).toBe(12);
    const instances = {
      start: await instanceOf('vm_rcstart'), stop: await instanceOf('vm_rcstop'), run: await instanceOf('vm_rcrun'),
    };

    expect(await sweep.execute(() => false, 3)).toBe(4);

    expect(await row('vm_rcstart')).toEqual({ status: 'running', ipv4: startIp, deleted: false, instance_missing: false });
    expect(await row('vm_rcstop')).toEqual({ status: 'stopped', ipv4: stopIp, deleted: false, instance_missing: false });
    expect(await row('vm_rcrun')).toEqual({ status: 'running', ipv4: runIp, deleted: false, instance_missing: false });
    expect(await row('vm_rcgone')).toEqual({ status: 'running', ipv4: goneIp, deleted: false, instance_missing: true });
    expect(await row('vm_rcbusy')).toEqual({ status: 'running', ipv4: busyIp, deleted: false, instance_missing: false });
    expect(await row('vm_rccreating')).toEqual({ status: 'creating', ipv4: null, deleted: false, instance_missing: false });
    expect(await row('vm_rcseeded')).toEqual({ status: 'running', ipv4: '100.64.0.1', deleted: false, instance_missing: false });
    // No server was deleted: the vCPUs are all still used.
    expect(await vcpusUsed()).toBe(12);
    // Nothing was done at the provider: no instance made, powered or deleted by the sweep.
    expect(await t.sql(`SELECT server_id FROM provider_instances WHERE server_id = 'vm_rcgone' AND deleted_at IS NULL`)).toEqual([]);
    expect(await t.sql(`SELECT server_id, action FROM provider_compute_calls WHERE step NOT LIKE 'op_seed/%' AND server_id LIKE 'vm_rc%'`)).toEqual([]);

    expect(await audits('vm_rcstart')).toEqual([
      audit('vm_rcstart', {
        reason: 'the instance is running at the provider', from: { status: 'starting', instance_missing_since: null }, to: { status: 'running' },
        instance: { instance_id: instances.start.instance_id, power: 'running', ipv4: startIp },
      }),
    ]);
    expect(await audits('vm_rcstop')).toEqual([
      audit('vm_rcstop', {
        reason: 'the instance is stopped at the provider', from: { status: 'running', instance_missing_since: null }, to: { status: 'stopped' },
        instance: { instance_id: instances.stop.instance_id, power: 'stopped', ipv4: stopIp },
      }),
    ]);
    expect(await audits('vm_rcrun')).toEqual([
      audit('vm_rcrun', {
        reason: 'the instance is running at the provider', from: { status: 'stopped', instance_missing_since: null }, to: { status: 'running' },
        instance: { instance_id: instances.run.instance_id, power: 'running', ipv4: runIp },
      }),
    ]);
    const [gone] = await t.sql<{ since: Date }>(`SELECT instance_missing_since AS since FROM servers WHERE id = 'vm_rcgone'`);
    expect(gone.since.toISOString()).toMatch(ISO);
    expect(await audits('vm_rcgone')).toEqual([
      audit('vm_rcgone', {
        reason: 'running server has no instance at the provider', from: { status: 'running', instance_missing_since: null },
        to: { instance_missing_since: gone.since.toISOString() }, instance: null,
      }),
    ]);
    expect(await audits('vm_rcbusy')).toEqual([]);
    expect(await audits('vm_rccreating')).toEqual([]);
    expect(await audits('vm_rcseeded')).toEqual([]);

    // While its instance is missing, power actions and renewal are refused, nothing recorded.
    const operationsBefore = await t.sql(`SELECT id FROM operations WHERE vm_id = 'vm_rcgone'`);
    for (const [path, body] of [['stop', {}], ['reboot', {}], ['renew', { term_months: 1 }]] as const) {
      const refused = await t.http.post(`/v1/servers/vm_rcgone/${path}`).set('Authorization', `Bearer ${apiToken('rc', 'rw')}`).send(body);
      expect({ path, status: refused.status, body: refused.body }).toEqual({
        path,
        status: 409,
        body: { error: { code: 'invalid_state', message: 'Server vm_rcgone has no instance at the compute provider', request_id: expect.any(String), details: { instance_missing_since: gone.since.toISOString() } } },
      });
    }
    expect(await t.sql(`SELECT id FROM operations WHERE vm_id = 'vm_rcgone'`)).toEqual(operationsBefore);

    // A second sweep: the missing instance is only reported again (no second audit row), nothing else to do.
    expect(await sweep.execute()).toBe(0);
    expect(await t.sql(`SELECT count(*)::int AS n FROM audit_log WHERE action = 'server.reconciled'`)).toEqual([{ n: 4 }]);

    // The instance is seen again: the flag is cleared, audited.
    await t.sql(`UPDATE provider_instances SET deleted_at = NULL WHERE instance_id = $1`, [goneInstance.instance_id]);
    expect(await sweep.execute()).toBe(1);
    expect(await row('vm_rcgone')).toEqual({ status: 'running', ipv4: goneIp, deleted: false, instance_missing: false });
    expect((await audits('vm_rcgone'))[1]).toEqual(
      audit('vm_rcgone', {
        reason: 'the instance is at the provider again', from: { status: 'running', instance_missing_since: gone.since.toISOString() },
        to: { instance_missing_since: null }, instance: { instance_id: goneInstance.instance_id, power: 'running', ipv4: goneIp },
      }),
    );

    // The operation ends (its answer lost too): the next sweep settles its server.
    await t.sql(`UPDATE operations SET status = 'failed', error = '{"code":"internal","message":"x"}', finished_at = now() WHERE id = 'op_rcbusy0000000000000000'`);
    expect(await sweep.execute()).toBe(1);
    expect(await row('vm_rcbusy')).toEqual({ status: 'stopped', ipv4: busyIp, deleted: false, instance_missing: false });

    // The creating server is no live server verify looks at; everything else agrees with the provider.
    await expectVerified(t);
  });

  it('re-checks under the row lock: an operation accepted or a status moved while the instance was read leaves the server alone', async () => {
    await bought('vm_rcrace1', 'running');
    await bought('vm_rcrace2', 'running');
    await t.sql(`UPDATE provider_instances SET power = 'stopped' WHERE server_id IN ('vm_rcrace1', 'vm_rcrace2') AND deleted_at IS NULL`);
    const read = compute.getInstance.bind(compute);
    // What another process does between the sweep's read of the instance and its transaction.
    const meanwhile: Record<string, string> = {
      vm_rcrace1: `INSERT INTO operations (id, org_id, type, status, vm_id, steps) VALUES ('op_rcrace1000000000000000', 'org_rc', 'vm.start', 'running', 'vm_rcrace1', '[]')`,
      vm_rcrace2: `UPDATE servers SET status = 'stopping' WHERE id = 'vm_rcrace2'`,
    };
    const spy = jest.spyOn(compute, 'getInstance').mockImplementation(async (serverId: string) => {
      const instance = await read(serverId);
      if (meanwhile[serverId]) await t.sql(meanwhile[serverId]);
      return instance;
    });
    try {
      expect(await sweep.reconcile('org_rc', 'vm_rcrace1')).toBe(false);
      expect(await sweep.reconcile('org_rc', 'vm_rcrace2')).toBe(false);
    } finally {
      spy.mockRestore();
    }
    expect(await row('vm_rcrace1')).toMatchObject({ status: 'running', deleted: false, instance_missing: false });
    expect(await row('vm_rcrace2')).toMatchObject({ status: 'stopping', deleted: false, instance_missing: false });
    expect(await audits('vm_rcrace1')).toEqual([]);
    expect(await audits('vm_rcrace2')).toEqual([]);
    // Without interference, the next look settles the second one (stopping, the instance stopped).
    expect(await sweep.reconcile('org_rc', 'vm_rcrace2')).toBe(true);
    expect(await row('vm_rcrace2')).toMatchObject({ status: 'stopped' });
    await t.sql(`UPDATE operations SET status = 'failed', error = '{"code":"internal","message":"x"}', finished_at = now() WHERE id = 'op_rcrace1000000000000000'`);
    expect(await sweep.reconcile('org_rc', 'vm_rcrace1')).toBe(true);
  });

  it('skips a server whose instance cannot be read (provider down) and stops between servers when told', async () => {
    await bought('vm_rcdown', 'running');
    await t.sql(`UPDATE provider_instances SET power = 'stopped' WHERE server_id = 'vm_rcdown' AND deleted_at IS NULL`);
    expect(await sweep.execute(() => true)).toBe(0);
    t.settings.providerDown = true;
    try {
      expect(await sweep.execute()).toBe(0);
    } finally {
      t.settings.providerDown = false;
    }
    expect(await row('vm_rcdown')).toMatchObject({ status: 'running' });
    expect(await audits('vm_rcdown')).toEqual([]);
    expect(await sweep.execute()).toBe(1);
    expect(await row('vm_rcdown')).toMatchObject({ status: 'stopped' });
  });
});
