import { ProviderInstance } from '../../src/modules/servers/application/compute-provider.port';
import { planServerRepair } from '../../src/modules/servers/application/reconcile-servers.use-case';
import { Server, ServerStatus, instanceMissing, instanceMissingError } from '../../src/modules/servers/domain/server';

const NOW = new Date('2026-11-27T03:00:00Z');
const EARLIER = new Date('2026-11-26T03:00:00Z');

const server = (status: ServerStatus, over: Partial<Server> = {}): Server => ({
  id: 'vm_1', orgId: 'org_1', name: 'web-1', status, regionId: 'id-jkt', zoneId: 'id-jkt-a', plan: 'cx1', vcpus: 2,
  memoryGb: 4, diskGb: 40, image: 'debian-12', ipv4: '100.64.0.7', termMonths: 1, billing: null, price: null, expiresAt: null,
  labels: {}, deleteProtection: false, volumeIds: [], sshKeyIds: [], createdAt: new Date('2026-11-01T00:00:00Z'), deletedAt: null,
  instanceMissingSince: null, ...over,
});
const instance = (power: 'running' | 'stopped', over: Partial<ProviderInstance> = {}): ProviderInstance => ({
  instanceId: 'ins_1', serverId: 'vm_1', zoneId: 'id-jkt-a', vcpus: 2, memoryGb: 4, diskGb: 40, image: 'debian-12', ipv4: '100.64.0.7', power, ...over,
});

describe('planServerRepair', () => {
  it('leaves a deleted server alone, whatever the provider shows', () => {
    expect(planServerRepair(server('deleted', { deletedAt: EARLIER, ipv4: null }), null, NOW)).toBeUndefined();
    expect(planServerRepair(server('deleted', { deletedAt: EARLIER, ipv4: null }), instance('running'), NOW)).toBeUndefined();
  });

  it('reports a creating server without an operation, with or without an instance, and changes nothing', () => {
    expect(planServerRepair(server('creating', { ipv4: null }), null, NOW)).toEqual({
      kind: 'report', reason: 'creating server has no unfinished operation and no instance at the provider',
    });
    expect(planServerRepair(server('creating', { ipv4: null }), instance('running'), NOW)).toEqual({
      kind: 'report', reason: 'creating server has no unfinished operation but an instance at the provider',
    });
  });

  it('leaves a deleting server to the deletion sweep, with or without an instance, whatever its disks', () => {
    for (const found of [null, instance('running'), instance('stopped')]) {
      expect(planServerRepair(server('deleting'), found, NOW)).toBeUndefined();
      expect(planServerRepair(server('deleting', { volumeIds: ['vol_a'], instanceMissingSince: EARLIER }), found, NOW)).toBeUndefined();
    }
  });

  it.each([
    ['starting', 'running'],
    ['starting', 'stopped'],
    ['stopping', 'running'],
    ['stopping', 'stopped'],
    ['rebooting', 'running'],
    ['rebooting', 'stopped'],
  ] as const)('settles a %s server without an operation to what its %s instance shows', (status, power) => {
    expect(planServerRepair(server(status), instance(power), NOW)).toEqual({ kind: 'record', change: { status: power }, reason: `the instance is ${power} at the provider` });
  });

  it.each([
    ['running', 'stopped'],
    ['stopped', 'running'],
  ] as const)('records a %s server whose instance is %s as the instance shows', (status, power) => {
    expect(planServerRepair(server(status), instance(power), NOW)).toEqual({ kind: 'record', change: { status: power }, reason: `the instance is ${power} at the provider` });
  });

  it('keeps a suspended server suspended: a stopped instance is what it should be, a running one is reported, a missing one recorded', () => {
    const suspended = server('suspended', { suspendedAt: EARLIER, releaseAt: NOW });
    expect(planServerRepair(suspended, instance('stopped'), NOW)).toBeUndefined();
    expect(planServerRepair(suspended, instance('running'), NOW)).toEqual({ kind: 'report', reason: 'suspended server has a running instance at the provider' });
    expect(planServerRepair(suspended, null, NOW)).toEqual({ kind: 'record', change: { instanceMissingSince: NOW }, reason: 'suspended server has no instance at the provider' });
    expect(planServerRepair({ ...suspended, instanceMissingSince: EARLIER }, instance('stopped'), NOW)).toEqual({
      kind: 'record', change: { instanceMissingSince: null }, reason: 'the instance is at the provider again',
    });
  });

  it.each(['running', 'stopped'] as const)('does nothing for a %s server whose instance agrees', (status) => {
    expect(planServerRepair(server(status), instance(status), NOW)).toBeUndefined();
  });

  it.each(['running', 'stopped', 'starting', 'stopping', 'rebooting'] as const)(
    'flags a %s server whose instance is missing once (dated now), then only reports it; never invents an instance',
    (status) => {
      expect(planServerRepair(server(status), null, NOW)).toEqual({
        kind: 'record', change: { instanceMissingSince: NOW }, reason: `${status} server has no instance at the provider`,
      });
      expect(planServerRepair(server(status, { instanceMissingSince: EARLIER }), null, NOW)).toEqual({
        kind: 'report', reason: `${status} server has no instance at the provider`,
      });
    },
  );

  it('clears the flag when the instance is back, and records its power in the same change when it differs', () => {
    expect(planServerRepair(server('running', { instanceMissingSince: EARLIER }), instance('running'), NOW)).toEqual({
      kind: 'record', change: { instanceMissingSince: null }, reason: 'the instance is at the provider again',
    });
    expect(planServerRepair(server('running', { instanceMissingSince: EARLIER }), instance('stopped'), NOW)).toEqual({
      kind: 'record', change: { instanceMissingSince: null, status: 'stopped' }, reason: 'the instance is at the provider again; the instance is stopped at the provider',
    });
  });

  it('reports an instance whose ipv4 differs and never changes the address', () => {
    expect(planServerRepair(server('running'), instance('running', { ipv4: '100.64.0.9' }), NOW)).toEqual({
      kind: 'report', reason: 'server has ipv4 100.64.0.7 but its instance has 100.64.0.9',
    });
  });
});

describe('instanceMissing', () => {
  it('is true for a live server flagged by the sweep only', () => {
    expect(instanceMissing(server('running'))).toBe(false);
    expect(instanceMissing(server('running', { instanceMissingSince: EARLIER }))).toBe(true);
    expect(instanceMissing(server('deleted', { instanceMissingSince: EARLIER, deletedAt: NOW }))).toBe(false);
  });

  it('its refusal is a 409 invalid_state naming when the instance went missing', () => {
    const err = instanceMissingError(server('running', { instanceMissingSince: EARLIER }));
    expect({ code: err.code, message: err.message, details: err.details }).toEqual({
      code: 'invalid_state', message: 'Server vm_1 has no instance at the compute provider', details: { instance_missing_since: '2026-11-26T03:00:00.000Z' },
    });
  });
});
