import { DataSource } from 'typeorm';
import { ComputeProvider, ComputeUnavailable } from '../../src/modules/servers/application/compute-provider.port';
import { DomainError } from '../../src/shared/kernel/errors/domain-error';
import { organization, region } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';

/**
 * The simulated compute provider on a real database (both engines): its own tables, idempotency
 * by (server, step), unique live addresses, no secret kept, the adoption of seeded servers
 * (seed, any insert, and rows that existed before its migration), ACPI, PROVIDER_DOWN, faults.
 */
describe('the simulated compute provider', () => {
  let t: TestApp;
  let compute: ComputeProvider;
  const create = (serverId: string, step = `op_${serverId}/creating_instance`, image = 'ubuntu-24.04') => ({
    serverId, step, zoneId: 'id-jkt-a', vcpus: 2, memoryGb: 4, diskGb: 80, image,
    sshPublicKeys: ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8g x@y'],
    userData: '#cloud-config\nchpasswd: {list: "root:TopSecretUserData"}\n',
  });
  const instances = (serverId: string) =>
    t.sql(`SELECT server_id, zone_id, vcpus, memory_gb, disk_gb, image, ipv4, power, ssh_key_count, user_data_bytes, ignores_acpi,
                  deleted_at IS NOT NULL AS deleted FROM provider_instances WHERE server_id = $1 ORDER BY created_at`, [serverId]);
  const calls = (serverId: string) => t.sql(`SELECT step, action FROM provider_compute_calls WHERE server_id = $1 ORDER BY created_at, step`, [serverId]);

  beforeAll(async () => {
    t = await startTestApp();
    await t.seed({ regions: [region()], organizations: [organization('cpv')] });
    compute = t.app.get(ComputeProvider);
  });
  afterEach(() => {
    t.settings.providerDown = false;
    t.settings.providerFaults = 0;
    t.settings.simulatedAcpiIgnoredImages = [];
  });
  afterAll(async () => t?.close());

  it('a seeded server is adopted: a running instance with its ipv4 and no specs, which power calls and delete work on', async () => {
    const [server] = await t.sql<{ ipv4: string }>(`SELECT ipv4 FROM servers WHERE id = 'vm_cpvweb1'`);
    expect(server.ipv4).toMatch(/^100\.(6[4-9]|[7-9]\d|1[01]\d|12[0-7])\.\d+\.\d+$/);
    const adopted = await compute.getInstance('vm_cpvweb1');
    expect(adopted).toEqual({
      instanceId: expect.stringMatching(/^ins_[0-9a-f]{20}$/), serverId: 'vm_cpvweb1', zoneId: 'id-jkt-a', vcpus: null, memoryGb: null, diskGb: null,
      image: null, ipv4: server.ipv4, power: 'running',
    });
    expect(await compute.shutdown({ serverId: 'vm_cpvweb1', step: 'op_a/shutting_down' })).toEqual({ ...adopted, power: 'stopped' });
    expect(await compute.powerOn({ serverId: 'vm_cpvweb1', step: 'op_b/powering_on' })).toEqual(adopted);
    expect(await compute.awaitBoot({ serverId: 'vm_cpvweb1', step: 'op_b/booting' })).toEqual(adopted);
    // Any writer's seeded server is adopted the same way (a trigger); a bought one (with a plan) is not.
    await t.sql(`INSERT INTO servers (id, org_id, name, region_id, zone_id) VALUES ('vm_cpvsql', 'org_cpv', 'sql-1', 'id-jkt', 'id-jkt-a')`);
    const [sqlServer] = await t.sql<{ ipv4: string }>(`SELECT ipv4 FROM servers WHERE id = 'vm_cpvsql'`);
    expect(await instances('vm_cpvsql')).toEqual([
      { server_id: 'vm_cpvsql', zone_id: 'id-jkt-a', vcpus: null, memory_gb: null, disk_gb: null, image: null, ipv4: sqlServer.ipv4, power: 'running',
        ssh_key_count: 0, user_data_bytes: 0, ignores_acpi: false, deleted: false },
    ]);
    await compute.deleteInstance({ serverId: 'vm_cpvsql', step: 'op_c/deleting_instance' });
    expect(await compute.getInstance('vm_cpvsql')).toBeNull();
    expect(await calls('vm_cpvsql')).toEqual([{ step: 'op_c/deleting_instance', action: 'delete' }]);
  });

  it('creates once per (server, step), also when two calls race; a new address from the pool; keeps no secret', async () => {
    const [a, b] = await Promise.all([compute.createInstance(create('vm_cpvnew1')), compute.createInstance(create('vm_cpvnew1'))]);
    expect(b).toEqual(a);
    expect(a).toEqual({
      instanceId: expect.stringMatching(/^ins_[A-Za-z0-9]{20}$/), serverId: 'vm_cpvnew1', zoneId: 'id-jkt-a', vcpus: 2, memoryGb: 4, diskGb: 80,
      image: 'ubuntu-24.04', ipv4: expect.stringMatching(/^100\.\d+\.\d+\.\d+$/), power: 'running',
    });
    expect(await compute.createInstance(create('vm_cpvnew1'))).toEqual(a);
    expect(await instances('vm_cpvnew1')).toEqual([
      { server_id: 'vm_cpvnew1', zone_id: 'id-jkt-a', vcpus: 2, memory_gb: 4, disk_gb: 80, image: 'ubuntu-24.04', ipv4: a.ipv4, power: 'running',
        ssh_key_count: 1, user_data_bytes: 57, ignores_acpi: false, deleted: false },
    ]);
    expect(await calls('vm_cpvnew1')).toEqual([{ step: 'op_vm_cpvnew1/creating_instance', action: 'create' }]);
    const second = await compute.createInstance(create('vm_cpvnew2'));
    const live = await t.sql<{ ipv4: string }>(`SELECT ipv4 FROM provider_instances WHERE deleted_at IS NULL UNION ALL SELECT ipv4 FROM servers WHERE deleted_at IS NULL AND plan_id IS NULL`);
    expect(live.filter((r) => r.ipv4 === second.ipv4 || r.ipv4 === a.ipv4).length).toBe(2);
    const everything = JSON.stringify([await t.sql(`SELECT * FROM provider_instances`), await t.sql(`SELECT * FROM provider_compute_calls`)]);
    expect(everything).not.toContain('TopSecretUserData');
    expect(everything).not.toContain('AAAAC3NzaC1lZDI1NTE5');
  });

  it('a step repeated answers as it first did; deleting, listing by server id, deleting what is gone', async () => {
    const made = await compute.createInstance(create('vm_cpvlist'));
    const stopped = await compute.powerOff({ serverId: 'vm_cpvlist', step: 'op_1/powering_off' });
    expect(stopped).toEqual({ ...made, power: 'stopped' });
    await expect(compute.awaitBoot({ serverId: 'vm_cpvlist', step: 'op_1/booting' })).rejects.toEqual(
      new DomainError('invalid_state', 'The instance of server vm_cpvlist is stopped; it does not boot until powered on'),
    );
    await compute.powerOn({ serverId: 'vm_cpvlist', step: 'op_2/powering_on' });
    expect(await compute.powerOff({ serverId: 'vm_cpvlist', step: 'op_1/powering_off' })).toEqual(stopped);
    expect((await compute.getInstance('vm_cpvlist'))?.power).toBe('running');
    expect(await compute.reset({ serverId: 'vm_cpvlist', step: 'op_3/resetting' })).toEqual(made);
    expect(await compute.reboot({ serverId: 'vm_cpvlist', step: 'op_4/rebooting' })).toEqual(made);

    const ids = (await compute.listInstances()).map((i) => i.serverId);
    expect(ids).toEqual([...ids].sort());
    expect(ids).toEqual(expect.arrayContaining(['vm_cpvlist', 'vm_cpvweb1']));
    const page1 = await compute.listInstances({ limit: 1 });
    expect(page1).toHaveLength(1);
    expect((await compute.listInstances({ after: page1[0].serverId, limit: 100 })).map((i) => i.serverId)).toEqual(ids.slice(1));

    await compute.deleteInstance({ serverId: 'vm_cpvlist', step: 'op_5/deleting_instance' });
    await compute.deleteInstance({ serverId: 'vm_cpvlist', step: 'orphan-cleanup' });
    await compute.deleteInstance({ serverId: 'vm_never', step: 'op_6/deleting_instance' });
    expect(await compute.getInstance('vm_cpvlist')).toBeNull();
    expect((await compute.listInstances()).map((i) => i.serverId)).not.toContain('vm_cpvlist');
    await expect(compute.createInstance(create('vm_cpvlist', 'op_7/creating_instance'))).rejects.toEqual(
      new DomainError('invalid_state', 'The instance of server vm_cpvlist was deleted; it cannot be created again'),
    );
    expect(await calls('vm_cpvlist')).toEqual([
      { step: 'op_vm_cpvlist/creating_instance', action: 'create' },
      { step: 'op_1/powering_off', action: 'power_off' },
      { step: 'op_2/powering_on', action: 'power_on' },
      { step: 'op_3/resetting', action: 'reset' },
      { step: 'op_4/rebooting', action: 'reboot' },
      { step: 'op_5/deleting_instance', action: 'delete' },
      { step: 'orphan-cleanup', action: 'delete' },
    ]);
  });

  it('a guest ignoring ACPI (SIMULATED_ACPI_IGNORED_IMAGES, or marked) refuses the shutdown: invalid_state, stop with force', async () => {
    t.settings.simulatedAcpiIgnoredImages = ['debian-12'];
    await compute.createInstance(create('vm_cpvacpi', 'op_1/creating_instance', 'debian-12'));
    const refusal = new DomainError('invalid_state', 'The guest of server vm_cpvacpi did not halt within 120 s of the ACPI shutdown; stop it with force');
    await expect(compute.shutdown({ serverId: 'vm_cpvacpi', step: 'op_2/shutting_down' })).rejects.toEqual(refusal);
    expect(await instances('vm_cpvacpi')).toEqual([expect.objectContaining({ power: 'running', ignores_acpi: true })]);
    expect((await compute.powerOff({ serverId: 'vm_cpvacpi', step: 'op_3/powering_off' })).power).toBe('stopped');
    // A seeded server's guest marked by a test.
    await t.sql(`UPDATE provider_instances SET ignores_acpi = true WHERE server_id = 'vm_cpvweb1' AND deleted_at IS NULL`);
    await expect(compute.shutdown({ serverId: 'vm_cpvweb1', step: 'op_4/shutting_down' })).rejects.toBeInstanceOf(DomainError);
    await t.sql(`UPDATE provider_instances SET ignores_acpi = false WHERE server_id = 'vm_cpvweb1'`);
  });

  it('server images: one copy per image id (racing calls and PROVIDER_FAULTS alike); an instance is created or rebuilt from a live image only', async () => {
    await compute.createInstance(create('vm_cpvimg1'));
    const call = { imageId: 'img_cpv1', step: 'op_cpvimg/imaging', serverId: 'vm_cpvimg1' };
    const [a, b] = await Promise.all([compute.createImage(call), compute.createImage(call)]);
    expect(b).toEqual(a);
    expect(a).toEqual({ providerId: expect.stringMatching(/^pimg_[A-Za-z0-9]{20}$/), imageId: 'img_cpv1', serverId: 'vm_cpvimg1', zoneId: 'id-jkt-a', diskGb: 80, sourceImage: 'ubuntu-24.04' });
    expect(await compute.getImage('img_cpv1')).toEqual(a);
    expect((await compute.listServerImages()).map((i) => i.imageId)).toContain('img_cpv1');

    // Made from it, and rebuilt from it.
    expect(await compute.createInstance(create('vm_cpvimg2', 'op_cpvimg2/creating_instance', 'img_cpv1'))).toMatchObject({ image: 'img_cpv1', power: 'running' });
    expect(await compute.rebuildInstance({ serverId: 'vm_cpvimg1', step: 'op_cpvrb/rebuilding', image: 'img_cpv1', sshPublicKeys: [], userData: null })).toMatchObject({ image: 'img_cpv1' });
    // A server without an instance, an image never made: final refusals.
    await expect(compute.createImage({ imageId: 'img_cpv2', step: 'op_x/imaging', serverId: 'vm_cpvnone' })).rejects.toEqual(new DomainError('invalid_state', 'The compute provider has no instance for server vm_cpvnone'));
    await expect(compute.createInstance(create('vm_cpvimg3', 'op_cpvimg3/creating_instance', 'img_cpvnever'))).rejects.toEqual(new DomainError('invalid_state', 'The compute provider has no image img_cpvnever to install'));
    expect(await instances('vm_cpvimg3')).toEqual([]);

    // Deleted (twice: the second succeeds too), it is gone, never made again, and nothing is made from it.
    await compute.deleteImage({ imageId: 'img_cpv1', step: 'op_del/deleting' });
    await compute.deleteImage({ imageId: 'img_cpv1', step: 'op_del/deleting' });
    expect(await compute.getImage('img_cpv1')).toBeNull();
    await expect(compute.createImage(call)).rejects.toBeInstanceOf(DomainError);
    await expect(compute.createInstance(create('vm_cpvimg4', 'op_cpvimg4/creating_instance', 'img_cpv1'))).rejects.toEqual(new DomainError('invalid_state', 'The compute provider has no image img_cpv1 to install'));

    // Faults (before the call, or the answer lost): one copy whatever was retried.
    t.settings.providerFaults = 0.5;
    let made;
    for (let i = 0; i < 60 && !made; i++) {
      made = await compute.createImage({ imageId: 'img_cpvf', step: 'op_f/imaging', serverId: 'vm_cpvimg2' }).catch((err: unknown) => (err instanceof ComputeUnavailable ? undefined : Promise.reject(err)));
    }
    t.settings.providerFaults = 0;
    expect(made).toEqual(await compute.getImage('img_cpvf'));
    expect(await t.sql(`SELECT count(*)::int AS n FROM provider_images WHERE image_id = 'img_cpvf'`)).toEqual([{ n: 1 }]);
  });

  it('PROVIDER_DOWN fails every call and the ping; PROVIDER_FAULTS never makes two instances', async () => {
    t.settings.providerDown = true;
    await expect(compute.ping()).rejects.toEqual(new ComputeUnavailable('The compute provider is down (PROVIDER_DOWN)'));
    await expect(compute.getInstance('vm_cpvweb1')).rejects.toBeInstanceOf(ComputeUnavailable);
    await expect(compute.createInstance(create('vm_cpvdown'))).rejects.toBeInstanceOf(ComputeUnavailable);
    t.settings.providerDown = false;
    expect(await instances('vm_cpvdown')).toEqual([]);

    t.settings.providerFaults = 0.5;
    let made;
    for (let i = 0; i < 60 && !made; i++) made = await compute.createInstance(create('vm_cpvfault')).catch((err: unknown) => (err instanceof ComputeUnavailable ? undefined : Promise.reject(err)));
    await compute.ping(); // exempt from random faults
    t.settings.providerFaults = 0;
    expect(made).toEqual(await compute.getInstance('vm_cpvfault'));
    expect(await instances('vm_cpvfault')).toHaveLength(1);
    expect(await calls('vm_cpvfault')).toEqual([{ step: 'op_vm_cpvfault/creating_instance', action: 'create' }]);
  });

  it('the migration adopts the live seeded servers that existed before it, not deleted or bought ones', async () => {
    const ds = t.app.get(DataSource);
    const later = (await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM schema_migrations WHERE timestamp >= 1764000000272`))[0].n;
    for (let i = 0; i < later; i++) await ds.undoLastMigration({ transaction: 'all' });
    try {
      expect(await t.sql(`SELECT to_regclass('provider_instances') AS t`)).toEqual([{ t: null }]);
      await t.sql(`INSERT INTO servers (id, org_id, name, region_id, zone_id) VALUES ('vm_cpvold', 'org_cpv', 'old-1', 'id-jkt', 'id-jkt-a')`);
      await t.sql(`INSERT INTO servers (id, org_id, name, region_id, zone_id) VALUES ('vm_cpvgone', 'org_cpv', 'gone-1', 'id-jkt', 'id-jkt-a')`);
      await t.sql(`UPDATE servers SET deleted_at = now() WHERE id = 'vm_cpvgone'`);
    } finally {
      await ds.runMigrations({ transaction: 'all' });
    }
    const [old] = await t.sql<{ ipv4: string }>(`SELECT ipv4 FROM servers WHERE id = 'vm_cpvold'`);
    expect(await compute.getInstance('vm_cpvold')).toMatchObject({ serverId: 'vm_cpvold', ipv4: old.ipv4, power: 'running', vcpus: null, image: null });
    expect(await compute.getInstance('vm_cpvgone')).toBeNull();
    expect(await t.sql(`SELECT count(*)::int AS n FROM provider_instances WHERE server_id = 'vm_cpvweb1' AND deleted_at IS NULL`)).toEqual([{ n: 1 }]);
  });
});
