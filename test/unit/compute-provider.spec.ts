import { CleanUpOrphanInstances } from '../../src/modules/servers/application/clean-up-orphan-instances.use-case';
import { ComputeGateway } from '../../src/modules/servers/application/compute-gateway';
import { OrphanInstanceServers } from '../../src/modules/servers/application/orphan-instances.port';
import { ComputeUnavailable } from '../../src/modules/servers/application/compute-provider.port';
import { SimulatedInstance, checkConsole, simulateComputeCall, userDataBytes } from '../../src/modules/servers/domain/simulated-instance';
import { InMemoryComputeProvider } from '../../src/modules/servers/testing/in-memory-compute-provider';
import { CIRCUIT_THRESHOLD } from '../../src/modules/operations/application/provider-circuit';
import { StepUnavailable } from '../../src/modules/operations/application/operation-executors';
import { DomainError } from '../../src/shared/kernel/errors/domain-error';

const create = {
  serverId: 'vm_1', step: 'op_1/creating_instance', zoneId: 'id-jkt-a', vcpus: 2, memoryGb: 4, diskGb: 80, image: 'debian-12',
  sshPublicKeys: ['ssh-ed25519 AAAA x@y'], userData: '#cloud-config\npassword: s3cret\n',
};
const running: SimulatedInstance = {
  instanceId: 'ins_1', serverId: 'vm_1', zoneId: 'z', vcpus: 1, memoryGb: 2, diskGb: 40, image: 'debian-12', ipv4: '100.64.0.9', power: 'running',
  sshKeyCount: 0, userDataBytes: 0, ignoresAcpi: false, deleted: false,
};
const invalid = (message: string) => new DomainError('invalid_state', message);

describe('the simulated compute provider: its rules (simulateComputeCall)', () => {
  const on = (action: 'await_boot' | 'power_on' | 'shutdown' | 'power_off' | 'reboot' | 'reset' | 'delete', i: SimulatedInstance | undefined) =>
    simulateComputeCall(i, { action, serverId: 'vm_1' });

  it('creates a running instance with the address given; a server with a live instance gets that one; a deleted one is never made again', () => {
    const input = { action: 'create' as const, serverId: 'vm_1', instanceId: 'ins_2', zoneId: 'z', vcpus: 2, memoryGb: 4, diskGb: 80, image: 'ubuntu-24.04', ipv4: '100.64.0.10', sshKeyCount: 2, userDataBytes: 12, ignoresAcpi: false };
    expect(simulateComputeCall(undefined, input)).toEqual({
      instanceId: 'ins_2', serverId: 'vm_1', zoneId: 'z', vcpus: 2, memoryGb: 4, diskGb: 80, image: 'ubuntu-24.04', ipv4: '100.64.0.10', power: 'running',
      sshKeyCount: 2, userDataBytes: 12, ignoresAcpi: false, deleted: false,
    });
    expect(simulateComputeCall(running, input)).toBe(running);
    expect(() => simulateComputeCall({ ...running, deleted: true }, input)).toThrow(invalid('The instance of server vm_1 was deleted; it cannot be created again'));
  });

  it('powers: shutdown and power_off stop, power_on, reboot and reset run (from either state)', () => {
    const stopped = { ...running, power: 'stopped' as const };
    expect(on('shutdown', running)).toEqual(stopped);
    expect(on('shutdown', stopped)).toEqual(stopped);
    expect(on('power_off', running)).toEqual(stopped);
    for (const a of ['power_on', 'reboot', 'reset'] as const) {
      expect(on(a, stopped)).toEqual(running);
      expect(on(a, running)).toEqual(running);
    }
  });

  it('a guest that ignores ACPI does not halt on shutdown: invalid_state, stop with force; power_off stops it', () => {
    const stubborn = { ...running, ignoresAcpi: true };
    expect(() => on('shutdown', stubborn)).toThrow(invalid('The guest of server vm_1 did not halt within 120 s of the ACPI shutdown; stop it with force'));
    expect(on('power_off', stubborn)).toEqual({ ...stubborn, power: 'stopped' });
  });

  it('await_boot answers a running instance and refuses a stopped one', () => {
    expect(on('await_boot', running)).toEqual(running);
    expect(() => on('await_boot', { ...running, power: 'stopped' })).toThrow(invalid('The instance of server vm_1 is stopped; it does not boot until powered on'));
  });

  it('every power call on a server without a live instance is invalid_state; delete of none succeeds', () => {
    for (const a of ['await_boot', 'power_on', 'shutdown', 'power_off', 'reboot', 'reset'] as const) {
      expect(() => on(a, undefined)).toThrow(invalid('The compute provider has no instance for server vm_1'));
      expect(() => on(a, { ...running, deleted: true })).toThrow(invalid('The compute provider has no instance for server vm_1'));
    }
    expect(on('delete', undefined)).toBeUndefined();
    expect(on('delete', running)).toEqual({ ...running, power: 'stopped', deleted: true });
    expect(on('delete', { ...running, deleted: true })).toEqual({ ...running, deleted: true });
  });

  it('opens a console to a live running instance only', () => {
    expect(checkConsole(running, 'vm_1')).toBe(running);
    expect(() => checkConsole({ ...running, power: 'stopped' }, 'vm_1')).toThrow(invalid('The instance of server vm_1 is stopped; a console needs it running'));
    expect(() => checkConsole({ ...running, deleted: true }, 'vm_1')).toThrow(invalid('The compute provider has no instance for server vm_1'));
    expect(() => checkConsole(undefined, 'vm_1')).toThrow(invalid('The compute provider has no instance for server vm_1'));
  });

  it('keeps only the byte count of user_data', () => {
    expect([userDataBytes(null), userDataBytes(''), userDataBytes('abc'), userDataBytes('é€')]).toEqual([0, 0, 3, 5]);
  });
});

describe('InMemoryComputeProvider: idempotent by (server, step)', () => {
  let compute: InMemoryComputeProvider;
  beforeEach(() => {
    compute = new InMemoryComputeProvider();
  });

  it('creates once per (server, step), even when the answer was lost; keeps no secret', async () => {
    compute.loseNextAnswer();
    await expect(compute.createInstance(create)).rejects.toEqual(new ComputeUnavailable('answer lost (test)'));
    const again = await compute.createInstance(create);
    expect(again).toEqual({ instanceId: 'ins_1', serverId: 'vm_1', zoneId: 'id-jkt-a', vcpus: 2, memoryGb: 4, diskGb: 80, image: 'debian-12', ipv4: '100.64.0.1', power: 'running' });
    expect(await compute.getInstance('vm_1')).toEqual(again);
    expect(compute.effective).toEqual([{ serverId: 'vm_1', step: 'op_1/creating_instance', action: 'create' }]);
    expect(compute.simulated('vm_1')).toMatchObject({ sshKeyCount: 1, userDataBytes: 31 });
    expect(JSON.stringify([...compute.instances.values(), ...compute.recorded.values()])).not.toContain('s3cret');
  });

  it('a step repeated answers as the first call did, even after the power changed since', async () => {
    await compute.createInstance(create);
    const stopped = await compute.shutdown({ serverId: 'vm_1', step: 'op_2/shutting_down' });
    expect(stopped.power).toBe('stopped');
    await compute.powerOn({ serverId: 'vm_1', step: 'op_3/powering_on' });
    expect(await compute.shutdown({ serverId: 'vm_1', step: 'op_2/shutting_down' })).toEqual(stopped);
    expect((await compute.getInstance('vm_1'))?.power).toBe('running');
    expect(compute.effective.map((c) => c.action)).toEqual(['create', 'shutdown', 'power_on']);
  });

  it('two servers never share an address; a deleted instance is gone from reads and lists; deleting again succeeds', async () => {
    const a = await compute.createInstance(create);
    const b = await compute.createInstance({ ...create, serverId: 'vm_2' });
    expect(a.ipv4).not.toBe(b.ipv4);
    await compute.deleteInstance({ serverId: 'vm_1', step: 'op_4/deleting_instance' });
    await compute.deleteInstance({ serverId: 'vm_1', step: 'orphan-cleanup' });
    expect(await compute.getInstance('vm_1')).toBeNull();
    expect(await compute.listInstances()).toEqual([b]);
    await expect(compute.createInstance({ ...create, step: 'op_5/creating_instance' })).rejects.toEqual(invalid('The instance of server vm_1 was deleted; it cannot be created again'));
  });

  it('lists live instances by server id, a page at a time', async () => {
    for (const id of ['vm_c', 'vm_a', 'vm_b']) await compute.createInstance({ ...create, serverId: id });
    expect((await compute.listInstances({ limit: 2 })).map((i) => i.serverId)).toEqual(['vm_a', 'vm_b']);
    expect((await compute.listInstances({ after: 'vm_b', limit: 2 })).map((i) => i.serverId)).toEqual(['vm_c']);
  });

  it('an image listed as ignoring ACPI: shutdown refused, nothing recorded, power off stops it', async () => {
    compute.acpiIgnoredImages.add('debian-12');
    await compute.createInstance(create);
    await expect(compute.shutdown({ serverId: 'vm_1', step: 'op_2/shutting_down' })).rejects.toBeInstanceOf(DomainError);
    expect((await compute.getInstance('vm_1'))?.power).toBe('running');
    expect((await compute.powerOff({ serverId: 'vm_1', step: 'op_3/powering_off' })).power).toBe('stopped');
  });

  it('an adopted (seeded) instance has the server\'s address, no specs, and takes power calls', async () => {
    expect(compute.adopt('vm_seed', 'id-jkt-a', '100.64.0.7')).toEqual({
      instanceId: 'ins_1', serverId: 'vm_seed', zoneId: 'id-jkt-a', vcpus: null, memoryGb: null, diskGb: null, image: null, ipv4: '100.64.0.7', power: 'running',
    });
    expect(await compute.reboot({ serverId: 'vm_seed', step: 'op_1/rebooting' })).toMatchObject({ ipv4: '100.64.0.7', power: 'running' });
  });
});

describe('InMemoryComputeProvider: consoles', () => {
  it('a new credential each call, hashes only kept; a repeated step replaces its credential', async () => {
    const compute = new InMemoryComputeProvider();
    const made = await compute.createInstance(create);
    const expiresAt = new Date('2026-11-27T10:01:00.000Z');
    const a = await compute.createConsole({ serverId: 'vm_1', expiresAt });
    const b = await compute.createConsole({ serverId: 'vm_1', expiresAt });
    expect(a).toEqual({ type: 'vnc', url: expect.stringMatching(new RegExp(`^wss://console\\.compute\\.invalid/v1/vnc/${made.instanceId}\\?token=\\w+$`)), password: expect.stringMatching(/^[A-Za-z0-9]{24}$/), expiresAt });
    expect(b.password).not.toBe(a.password);
    await compute.createConsole({ serverId: 'vm_1', step: 's', expiresAt });
    await compute.createConsole({ serverId: 'vm_1', step: 's', expiresAt });
    expect(compute.consoles.size).toBe(3);
    expect(JSON.stringify([...compute.consoles.values()])).not.toContain(a.password);
    await compute.powerOff({ serverId: 'vm_1', step: 'off' });
    await expect(compute.createConsole({ serverId: 'vm_1', expiresAt })).rejects.toEqual(invalid('The instance of server vm_1 is stopped; a console needs it running'));
  });
});

describe('ComputeGateway: the shared circuit and failure classes', () => {
  let compute: InMemoryComputeProvider;
  let gateway: ComputeGateway;
  beforeEach(() => {
    compute = new InMemoryComputeProvider();
    gateway = new ComputeGateway(compute);
  });

  it('turns ComputeUnavailable into StepUnavailable, and opens after the threshold, closing at the first success', async () => {
    compute.failNext(1);
    await expect(gateway.createInstance(create)).rejects.toEqual(new StepUnavailable('failed (test)'));
    expect(gateway.isDown()).toBe(false);
    compute.down = true;
    for (let i = 0; i < CIRCUIT_THRESHOLD - 1; i++) await gateway.probeOnce();
    expect(gateway.isDown()).toBe(true);
    compute.down = false;
    expect(await gateway.createInstance(create)).toMatchObject({ serverId: 'vm_1', power: 'running' });
    expect(gateway.isDown()).toBe(false);
  });

  it('a DomainError passes as is and counts as an answer', async () => {
    compute.down = true;
    for (let i = 0; i < CIRCUIT_THRESHOLD; i++) await gateway.probeOnce();
    compute.down = false;
    await expect(gateway.powerOn({ serverId: 'vm_none', step: 's' })).rejects.toEqual(invalid('The compute provider has no instance for server vm_none'));
    expect(gateway.isDown()).toBe(false);
  });

  it('an error the adapter did not classify is unavailable too', async () => {
    jest.spyOn(compute, 'getInstance').mockRejectedValueOnce(new Error('socket hang up'));
    await expect(gateway.getInstance('vm_1')).rejects.toEqual(new StepUnavailable('The compute provider could not be reached: socket hang up'));
  });
});

describe('CleanUpOrphanInstances', () => {
  class Gone extends OrphanInstanceServers {
    constructor(private readonly ids: Set<string>) {
      super();
    }
    async goneAmong(serverIds: readonly string[]): Promise<string[]> {
      return serverIds.filter((id) => this.ids.has(id));
    }
  }

  it('deletes the gone servers\' instances a page at a time; one whose delete fails is left for the next sweep', async () => {
    const compute = new InMemoryComputeProvider();
    for (const id of ['vm_a', 'vm_b', 'vm_c', 'vm_d', 'vm_e']) await compute.createInstance({ ...create, serverId: id });
    const gateway = new ComputeGateway(compute);
    const sweep = new CleanUpOrphanInstances(gateway, new Gone(new Set(['vm_a', 'vm_c', 'vm_e'])));
    const deleteInstance = compute.deleteInstance.bind(compute);
    jest.spyOn(compute, 'deleteInstance').mockImplementation(async (input) => {
      if (input.serverId === 'vm_c') throw new ComputeUnavailable('failed (test)');
      return deleteInstance(input);
    });
    expect(await sweep.execute(() => false, 2)).toBe(2);
    expect((await compute.listInstances()).map((i) => i.serverId)).toEqual(['vm_b', 'vm_c', 'vm_d']);
    expect(compute.effective.filter((c) => c.action === 'delete').map((c) => [c.serverId, c.step])).toEqual([
      ['vm_a', `orphan-cleanup/${compute.simulated('vm_a')!.instanceId}`],
      ['vm_e', `orphan-cleanup/${compute.simulated('vm_e')!.instanceId}`],
    ]);
    jest.restoreAllMocks();
    expect(await sweep.execute()).toBe(1);
    expect((await compute.listInstances()).map((i) => i.serverId)).toEqual(['vm_b', 'vm_d']);
  });
});
