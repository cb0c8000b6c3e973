import { SchedulerRegistry } from '@nestjs/schedule';
import { CleanUpOrphanInstances } from '../../src/modules/servers/application/clean-up-orphan-instances.use-case';
import { ComputeProvider } from '../../src/modules/servers/application/compute-provider.port';
import { organization, region } from '../support/fixtures';
import { waitFor } from '../support/renewals';
import { TestApp, startTestApp } from '../support/test-app';

/**
 * The orphan instance sweep (servers.md "The compute provider and the operations"): every
 * ORPHAN_INSTANCE_SWEEP_INTERVAL_MS in worker processes, the instances whose server is deleted or
 * unknown and that no unfinished operation names are deleted at the compute provider.
 */
describe('the orphan instance sweep', () => {
  let t: TestApp;
  let compute: ComputeProvider;
  const create = (serverId: string) => ({
    serverId, step: `op_x/${serverId}/creating_instance`, zoneId: 'id-jkt-a', vcpus: 1, memoryGb: 2, diskGb: 40, image: 'debian-12', sshPublicKeys: [], userData: null,
  });
  const live = async () =>
    (await t.sql<{ server_id: string }>(`SELECT server_id FROM provider_instances WHERE deleted_at IS NULL ORDER BY server_id`)).map((r) => r.server_id);
  const sweepCalls = () => t.sql(`SELECT server_id, action FROM provider_compute_calls WHERE step LIKE 'orphan-cleanup/%' ORDER BY server_id`);

  beforeAll(async () => {
    t = await startTestApp();
    await t.seed({ regions: [region()], organizations: [organization('oi', { volumes: [] })] });
    compute = t.app.get(ComputeProvider);
  });
  afterAll(async () => t?.close());

  it('is scheduled in a process that runs the worker, not in one that does not', async () => {
    expect(t.app.get(SchedulerRegistry).doesExist('interval', 'orphan-instance-sweep')).toBe(false);
    const worker = await startTestApp({ workerEnabled: true, workerIntervalMs: 3_600_000, orphanInstanceSweepIntervalMs: 200 });
    try {
      expect(worker.app.get(SchedulerRegistry).doesExist('interval', 'orphan-instance-sweep')).toBe(true);
      // An instance whose server the service never had: the scheduled sweep deletes it.
      await worker.app.get(ComputeProvider).createInstance(create('vm_oiunknownsched'));
      await waitFor(
        'the scheduled sweep to delete the instance',
        async () => (await worker.sql(`SELECT 1 FROM provider_instances WHERE server_id = 'vm_oiunknownsched' AND deleted_at IS NULL`)).length === 0,
        15_000,
        100,
      );
    } finally {
      await worker.close();
    }
  });

  it('deletes, a page at a time, the instances of deleted and unknown servers; keeps live servers\' and those an unfinished operation names', async () => {
    // Unknown at the service.
    await compute.createInstance(create('vm_oiunknown1'));
    await compute.createInstance(create('vm_oiunknown2'));
    // Seeded servers (adopted by the provider), then deleted in the service: one with an unfinished operation naming it.
    for (const id of ['vm_oigone', 'vm_oibusy']) {
      await t.sql(`INSERT INTO servers (id, org_id, name, region_id, zone_id) VALUES ($1, 'org_oi', $2, 'id-jkt', 'id-jkt-a')`, [id, id.slice(3)]);
      await t.sql(`UPDATE servers SET deleted_at = now() WHERE id = $1`, [id]);
    }
    await t.sql(
      `INSERT INTO operations (id, org_id, type, status, vm_id, steps) VALUES ('op_oibusy0000000000000000', 'org_oi', 'vm.delete', 'running', 'vm_oibusy', '[]')`,
    );
    expect(await live()).toEqual(['vm_oibusy', 'vm_oigone', 'vm_oiunknown1', 'vm_oiunknown2', 'vm_oiweb1']);

    const sweep = t.app.get(CleanUpOrphanInstances);
    expect(await sweep.execute(() => false, 2)).toBe(3);
    expect(await live()).toEqual(['vm_oibusy', 'vm_oiweb1']);
    expect(await sweepCalls()).toEqual([
      { server_id: 'vm_oigone', action: 'delete' },
      { server_id: 'vm_oiunknown1', action: 'delete' },
      { server_id: 'vm_oiunknown2', action: 'delete' },
    ]);
    expect(await sweep.execute(() => false, 2)).toBe(0);

    // The operation ends: the next sweep deletes its server's instance.
    await t.sql(`UPDATE operations SET status = 'failed', error = '{"code":"internal","message":"x"}', finished_at = now() WHERE id = 'op_oibusy0000000000000000'`);
    expect(await sweep.execute()).toBe(1);
    expect(await live()).toEqual(['vm_oiweb1']);
  });

  it('stops between two instances when told, and a provider that is down leaves everything for the next sweep', async () => {
    await compute.createInstance(create('vm_oistop1'));
    await compute.createInstance(create('vm_oistop2'));
    const sweep = t.app.get(CleanUpOrphanInstances);
    expect(await sweep.execute(() => true)).toBe(0);
    t.settings.providerDown = true;
    try {
      await expect(sweep.execute()).rejects.toThrow('The compute provider is down (PROVIDER_DOWN)');
    } finally {
      t.settings.providerDown = false;
    }
    expect(await live()).toEqual(['vm_oistop1', 'vm_oistop2', 'vm_oiweb1']);
    expect(await sweep.execute()).toBe(2);
    expect(await live()).toEqual(['vm_oiweb1']);
  });
});
