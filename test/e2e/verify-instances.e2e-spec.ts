import { VerifyInvariants } from '../../src/modules/verification/application/verify-invariants.use-case';
import { TypeOrmInvariantChecks } from '../../src/modules/verification/infrastructure/typeorm-invariant-checks';
import { ComputeProvider } from '../../src/modules/servers/application/compute-provider.port';
import { BlockStorage } from '../../src/modules/storage-provider/application/block-storage.port';
import { Db } from '../../src/shared/database/transaction';
import { UnitOfWork } from '../../src/shared/database/unit-of-work';
import { SystemClock } from '../../src/shared/kernel/clock/clock';
import { organization, region } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';

/**
 * verify's provider.instances_match_servers: the compute provider's live instances are the live
 * servers. A clean state passes; an orphan instance, a missing one, a wrong address or power, and an
 * unreachable provider are each named; an unfinished vm.* operation exempts its server.
 */
describe('verify: provider.instances_match_servers', () => {
  let t: TestApp;
  let verify: VerifyInvariants;
  let compute: ComputeProvider;
  const CHECK = 'provider.instances_match_servers';
  const violations = async () => (await verify.execute()).violations.filter((v) => v.check === CHECK);
  const create = (serverId: string) => ({
    serverId, step: `op_x/creating_instance`, zoneId: 'id-jkt-a', vcpus: 1, memoryGb: 2, diskGb: 40, image: 'debian-12', sshPublicKeys: [], userData: null,
  });

  beforeAll(async () => {
    t = await startTestApp();
    compute = t.app.get(ComputeProvider);
    verify = new VerifyInvariants(t.app.get(UnitOfWork), new TypeOrmInvariantChecks(t.app.get(Db), t.app.get(BlockStorage), compute), new SystemClock());
    await t.seed({
      regions: [region()],
      organizations: [organization('vi', { servers: [{ id: 'vm_viweb1', name: 'web-1', region: 'id-jkt', zone: 'id-jkt-a' }, { id: 'vm_viweb2', name: 'web-2', region: 'id-jkt', zone: 'id-jkt-a' }] })],
    });
  });
  afterEach(() => {
    t.settings.providerDown = false;
  });
  afterAll(async () => t?.close());

  it('a freshly seeded database passes (seeded servers are adopted); the check is listed with its description', async () => {
    const report = await verify.execute();
    expect(report.violations).toEqual([]);
    expect(report.checks.find((c) => c.name === CHECK)).toEqual({
      name: CHECK,
      description:
        'Every live server (not creating, no vm.* operation in flight) has a live instance at the compute provider with its ipv4, power, plan specs and image; no live instance belongs to a deleted or unknown server',
      violations: 0,
    });
  });

  it('names an orphan instance, a missing instance, a wrong address and a wrong power; an unfinished vm.* operation exempts its server', async () => {
    const orphan = await compute.createInstance(create('vm_viorphan'));
    const [web1] = await t.sql<{ instance_id: string; ipv4: string }>(`SELECT instance_id, ipv4 FROM provider_instances WHERE server_id = 'vm_viweb1'`);
    await compute.deleteInstance({ serverId: 'vm_viweb1', step: 'op_y/deleting_instance' });
    const [web2] = await t.sql<{ instance_id: string; ipv4: string }>(`SELECT instance_id, ipv4 FROM provider_instances WHERE server_id = 'vm_viweb2'`);
    await compute.powerOff({ serverId: 'vm_viweb2', step: 'op_z/powering_off' });
    // A deleted server whose instance is still live.
    await t.sql(`INSERT INTO servers (id, org_id, name, region_id, zone_id) VALUES ('vm_vigone', 'org_vi', 'gone-1', 'id-jkt', 'id-jkt-a')`);
    const [gone] = await t.sql<{ instance_id: string; ipv4: string }>(`SELECT instance_id, ipv4 FROM provider_instances WHERE server_id = 'vm_vigone'`);
    await t.sql(`UPDATE servers SET deleted_at = now() WHERE id = 'vm_vigone'`);
    // A server whose ipv4 differs from its instance's.
    await t.sql(`INSERT INTO servers (id, org_id, name, region_id, zone_id) VALUES ('vm_viaddr', 'org_vi', 'addr-1', 'id-jkt', 'id-jkt-a')`);
    const [addr] = await t.sql<{ instance_id: string; ipv4: string }>(`SELECT instance_id, ipv4 FROM provider_instances WHERE server_id = 'vm_viaddr'`);
    await t.sql(`UPDATE servers SET ipv4 = '100.127.255.254' WHERE id = 'vm_viaddr'`);

    expect(await violations()).toEqual([
      {
        check: CHECK, subject: 'vm_viaddr', message: `server has ipv4 100.127.255.254 but its instance has ${addr.ipv4}`,
        details: { org_id: 'org_vi', status: 'running', ipv4: '100.127.255.254', instance_id: addr.instance_id, instance_ipv4: addr.ipv4, instance_power: 'running' },
      },
      {
        check: CHECK, subject: 'vm_vigone', message: `server is deleted but its instance ${gone.instance_id} still exists at the provider`,
        details: { org_id: 'org_vi', status: 'deleted', ipv4: null, instance_id: gone.instance_id, instance_ipv4: gone.ipv4, instance_power: 'running' },
      },
      {
        check: CHECK, subject: 'vm_viweb1', message: 'running server has no instance at the provider',
        details: { org_id: 'org_vi', status: 'running', ipv4: web1.ipv4, instance_id: null, instance_ipv4: null, instance_power: null },
      },
      {
        check: CHECK, subject: 'vm_viweb2', message: "running server's instance is stopped at the provider",
        details: { org_id: 'org_vi', status: 'running', ipv4: web2.ipv4, instance_id: web2.instance_id, instance_ipv4: web2.ipv4, instance_power: 'stopped' },
      },
      {
        check: CHECK, subject: 'vm_viorphan', message: `the provider holds instance ${orphan.instanceId} of a server that does not exist`,
        details: { instance_id: orphan.instanceId, instance_ipv4: orphan.ipv4 },
      },
    ]);

    // Unfinished vm.* operations (a deletion under way, a stop in flight) exempt their servers; a volume operation does not.
    await t.sql(
      `INSERT INTO operations (id, org_id, type, status, vm_id, steps) VALUES
         ('op_vigone00000000000000000', 'org_vi', 'vm.delete', 'running', 'vm_vigone', '[]'),
         ('op_viweb200000000000000000', 'org_vi', 'vm.stop', 'pending', 'vm_viweb2', '[]')`,
    );
    expect((await violations()).map((v) => v.subject)).toEqual(['vm_viaddr', 'vm_viweb1', 'vm_viorphan']);

    // Repaired: the state is clean again.
    await t.sql(`UPDATE operations SET status = 'succeeded', result = '{}', finished_at = now() WHERE id IN ('op_vigone00000000000000000', 'op_viweb200000000000000000')`);
    await compute.deleteInstance({ serverId: 'vm_viorphan', step: 'fix' });
    await compute.deleteInstance({ serverId: 'vm_vigone', step: 'fix' });
    await compute.powerOn({ serverId: 'vm_viweb2', step: 'fix' });
    await t.sql(`UPDATE servers SET ipv4 = $1 WHERE id = 'vm_viaddr'`, [addr.ipv4]);
    // The missing instance is back (as after a restore at the provider); deleting the server instead would leave its disk on a deleted server.
    await t.sql(`UPDATE provider_instances SET deleted_at = NULL, power = 'running' WHERE instance_id = $1`, [web1.instance_id]);
    expect((await verify.execute()).violations).toEqual([]);
  });

  it('a provider that cannot list its instances is one violation', async () => {
    t.settings.providerDown = true;
    expect(await violations()).toEqual([
      { check: CHECK, subject: 'compute_provider', message: 'the compute provider could not list its instances: The compute provider is down (PROVIDER_DOWN)', details: {} },
    ]);
  });
});
