import { Money } from '../../src/shared/kernel/money/money';
import { PRORATION_MONTH_SECONDS, proratedCharge, remainingSeconds } from '../../src/modules/prepaid/domain/term';
import { Volume } from '../../src/modules/volumes/domain/volume';
import { assertResizable, checkNewSize, resizeAmount } from '../../src/modules/volumes/domain/volume-resize';
import { planRepair } from '../../src/modules/volumes/application/reconcile-volumes.use-case';
import { planServerRepair } from '../../src/modules/servers/application/reconcile-servers.use-case';
import { simulateCall } from '../../src/modules/storage-provider/domain/simulated-disk';
import { simulateComputeCall, SimulatedInstance } from '../../src/modules/servers/domain/simulated-instance';
import { Server } from '../../src/modules/servers/domain/server';
import { refusalOf } from '../support/assertions';

const NOW = new Date('2026-11-22T10:00:00Z');
const volume = (over: Partial<Volume> = {}): Volume => ({
  id: 'vol_1', orgId: 'org_1', name: 'data-1', status: 'available', type: 'premium', regionId: 'id-jkt', zoneId: 'id-jkt-a', sizeGb: 100,
  server: null, mountPath: null, mounted: false, termMonths: 1, billing: Money.parse('2.00000', 'USD'),
  price: { USD: Money.parse('0.02000', 'USD'), IDR: Money.parse('320', 'IDR') }, expiresAt: new Date('2026-12-21T00:00:00Z'),
  note: null, labels: {}, deleteProtection: false, createdAt: new Date('2026-11-21T00:00:00Z'), deletedAt: null, ...over,
});
const disk = { diskId: 'disk_1', volumeId: 'vol_1', zoneId: 'id-jkt-a', sizeGb: 100, serverId: null, mountPath: null, mounted: false };

describe('prorated charges (the rest of the term)', () => {
  it('r = whole seconds left / 30 days; rounded up to the minor unit; bigint only', () => {
    expect(PRORATION_MONTH_SECONDS).toBe(2_592_000n);
    expect(remainingSeconds(new Date('2026-12-21T00:00:00Z'), NOW)).toBe(2_469_600n);
    expect(remainingSeconds(new Date('2026-11-22T10:00:00.999Z'), NOW)).toBe(0n);
    expect(remainingSeconds(new Date('2026-11-01T00:00:00Z'), NOW)).toBe(0n);
    // A whole month: exactly the monthly amount.
    expect(proratedCharge(Money.parse('4.50000', 'USD'), new Date('2026-12-22T10:00:00Z'), NOW).format()).toBe('4.50000');
    // 2.00000 × 2469600 / 2592000 = 1.905555… → 1.90556 (up, never down).
    expect(proratedCharge(Money.parse('2.00000', 'USD'), new Date('2026-12-21T00:00:00Z'), NOW).format()).toBe('1.90556');
    // One second left of 1 IDR a month: still 1 rupiah.
    expect(proratedCharge(Money.parse('1', 'IDR'), new Date('2026-11-22T10:00:01Z'), NOW).format()).toBe('1');
    // Amounts far beyond 2^53 stay exact.
    expect(proratedCharge(Money.parse('90071992547409.93000', 'USD'), new Date('2026-12-22T10:00:00Z'), NOW).format()).toBe('90071992547409.93000');
    // Nothing for an ended term or a price that does not rise.
    expect(proratedCharge(Money.parse('2.00000', 'USD'), new Date('2026-11-01T00:00:00Z'), NOW).minor).toBe(0n);
    expect(proratedCharge(Money.parse('4.50000', 'USD').minus(Money.parse('9.00000', 'USD')), new Date('2026-12-22T10:00:00Z'), NOW).format()).toBe('0.00000');
  });

  it('a disk: added GB × the frozen price in its billing currency × r', () => {
    expect(resizeAmount(volume(), 100, NOW).format()).toBe('1.90556');
    expect(resizeAmount(volume({ billing: Money.parse('32000', 'IDR') }), 50, NOW).format()).toBe('15245');
  });
});

describe('growing a disk (domain)', () => {
  const offer = { maxGb: 4000, stepGb: 10 };
  it('grows only, by the step, up to max_gb; 400 naming size_gb', () => {
    expect(checkNewSize(volume(), offer, 200)).toBe(100);
    for (const [size, message] of [[100, /only grow/], [50, /only grow/], [205, /multiple of 10/], [4010, /at most 4000/]] as const) {
      const err = refusalOf(() => checkNewSize(volume(), offer, size));
      expect(err).toEqual(expect.objectContaining({ code: 'invalid_request', details: { field: 'size_gb' } }));
      expect(err.message).toMatch(message);
    }
  });

  it('available or attached only; suspended, creating, deleting, deleted: 409', () => {
    expect(() => assertResizable(volume())).not.toThrow();
    expect(() => assertResizable(volume({ status: 'attached' }))).not.toThrow();
    for (const status of ['suspended', 'creating', 'deleting', 'deleted'] as const) {
      expect(refusalOf(() => assertResizable(volume({ status })))).toEqual(expect.objectContaining({ code: 'invalid_state' }));
    }
  });

  it('the simulated provider grows a disk (attached or not), keeps a larger one, refuses a missing one', () => {
    const d = { ...disk, type: 'premium', deleted: false };
    expect(simulateCall(d, { action: 'resize', volumeId: 'vol_1', sizeGb: 200 })).toEqual({ ...d, sizeGb: 200 });
    expect(simulateCall({ ...d, sizeGb: 300 }, { action: 'resize', volumeId: 'vol_1', sizeGb: 200 })).toEqual({ ...d, sizeGb: 300 });
    expect(refusalOf(() => simulateCall({ ...d, deleted: true }, { action: 'resize', volumeId: 'vol_1', sizeGb: 200 }))).toEqual(expect.objectContaining({ code: 'invalid_state' }));
  });

  it('the reconciliation sweep settles gigabytes a failed resize left reserved by the disk at the provider', () => {
    expect(planRepair(volume({ resizeReservedGb: 100 }), { ...disk, sizeGb: 200 }, NOW)).toEqual({
      kind: 'record', change: { sizeGb: 200, resizeReservedGb: 0 }, reason: 'the resize took effect at the provider',
    });
    expect(planRepair(volume({ resizeReservedGb: 100 }), disk, NOW)).toEqual({ kind: 'record', change: { resizeReservedGb: 0 }, reason: 'the resize did not take effect at the provider' });
    expect(planRepair(volume({ resizeReservedGb: 0 }), disk, NOW)).toBeUndefined();
  });
});

describe('changing a plan, rebuilding (simulated provider, sweep)', () => {
  const live: SimulatedInstance = {
    instanceId: 'ins_1', serverId: 'vm_1', zoneId: 'id-jkt-a', vcpus: 1, memoryGb: 2, diskGb: 40, image: 'debian-12', ipv4: '100.64.0.7',
    power: 'stopped', sshKeyCount: 1, userDataBytes: 0, ignoresAcpi: false, deleted: false,
  };
  it('resize only while stopped, the boot disk never shrinks; the same call again answers the same', () => {
    const call = { action: 'resize' as const, serverId: 'vm_1', vcpus: 2, memoryGb: 4, diskGb: 80 };
    const after = simulateComputeCall(live, call)!;
    expect(after).toEqual({ ...live, vcpus: 2, memoryGb: 4, diskGb: 80 });
    expect(simulateComputeCall(after, call)).toBe(after);
    expect(refusalOf(() => simulateComputeCall({ ...live, power: 'running' }, call)).message).toMatch(/only when stopped/);
    expect(refusalOf(() => simulateComputeCall({ ...live, diskGb: 160 }, call)).message).toMatch(/cannot shrink/);
  });

  it('rebuild: the image reinstalled with the keys and user_data counted, powered on', () => {
    expect(simulateComputeCall(live, { action: 'rebuild', serverId: 'vm_1', image: 'ubuntu-24.04', sshKeyCount: 2, userDataBytes: 12 })).toEqual({
      ...live, image: 'ubuntu-24.04', sshKeyCount: 2, userDataBytes: 12, power: 'running',
    });
  });

  it('the sweep gives back vCPUs a failed plan change left reserved when the instance kept its specs, and reports it otherwise', () => {
    const server: Server = {
      id: 'vm_1', orgId: 'org_1', name: 'web-1', status: 'stopped', regionId: 'id-jkt', zoneId: 'id-jkt-a', plan: 'cx1', vcpus: 1,
      memoryGb: 2, diskGb: 40, image: 'debian-12', ipv4: '100.64.0.7', termMonths: 1, billing: null, price: null, expiresAt: null,
      labels: {}, deleteProtection: false, volumeIds: [], sshKeyIds: [], createdAt: NOW, deletedAt: null, instanceMissingSince: null, resizeReservedVcpus: 1,
    };
    const instance = { instanceId: 'ins_1', serverId: 'vm_1', zoneId: 'id-jkt-a', vcpus: 1, memoryGb: 2, diskGb: 40, image: 'debian-12', ipv4: '100.64.0.7', power: 'stopped' as const };
    expect(planServerRepair(server, instance, NOW)).toEqual({ kind: 'record', change: { resizeReservedVcpus: 0 }, reason: 'the plan change did not take effect at the provider' });
    expect(planServerRepair(server, { ...instance, vcpus: 2 }, NOW)).toEqual({ kind: 'report', reason: 'server has 1 vCPUs and 1 reserved but its instance has 2' });
  });
});
