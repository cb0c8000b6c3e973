import { AdvanceOperations, MAX_ATTEMPTS } from '../../src/modules/operations/application/advance-operations.use-case';
import { OperationExecutors, StepUnavailable } from '../../src/modules/operations/application/operation-executors';
import { STEP_RETRY_CAP_MS, stepRetryDelayMs } from '../../src/modules/operations/application/step-retry';
import { Operation } from '../../src/modules/operations/domain/operation';
import { InMemoryOperationRepository } from '../../src/modules/operations/testing/in-memory-operations.repository';
import { ProviderUnavailable } from '../../src/modules/storage-provider/application/block-storage.port';
import { CleanUpOrphanDisks } from '../../src/modules/volumes/application/clean-up-orphan-disks.use-case';
import { CIRCUIT_THRESHOLD, ProviderGateway } from '../../src/modules/storage-provider/application/provider-gateway';
import { VolumeStates } from '../../src/modules/volumes/application/volume-states.port';
import { InMemoryBlockStorage } from '../../src/modules/storage-provider/testing/in-memory-block-storage';
import { InMemoryWalletLedger } from '../../src/modules/wallet/testing/in-memory-wallet-ledger';
import { loadSettings } from '../../src/shared/config/settings';
import { InMemoryUnitOfWork } from '../../src/shared/database/in-memory-unit-of-work';
import { FixedClock } from '../../src/shared/kernel/clock/clock';
import { DomainError } from '../../src/shared/kernel/errors/domain-error';
import { Money } from '../../src/shared/kernel/money/money';

const NOW = new Date('2026-11-22T10:00:00.000Z');
const disk = { volumeId: 'vol_1', step: 'op_1/creating_volume', zoneId: 'z-a', sizeGb: 10, type: 'premium' };

describe('step retry schedule', () => {
  it('waits 1 s, 2 s, 4 s … after each failure, capped at 60 s', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 50].map((n) => stepRetryDelayMs(n))).toEqual([1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000]);
    expect(STEP_RETRY_CAP_MS).toBe(60_000);
    expect([1, 2, 3].map((n) => stepRetryDelayMs(n, 10))).toEqual([10, 20, 40]);
  });
});

describe('ProviderGateway: circuit and failure classes', () => {
  let storage: InMemoryBlockStorage;
  let gateway: ProviderGateway;

  beforeEach(() => {
    storage = new InMemoryBlockStorage();
    gateway = new ProviderGateway(storage);
  });

  it('turns ProviderUnavailable into StepUnavailable (retried by the worker), and counts it', async () => {
    storage.failNext(1);
    await expect(gateway.createDisk(disk)).rejects.toEqual(new StepUnavailable('failed (test)'));
    expect(gateway.isDown()).toBe(false);
  });

  it(`is down after ${CIRCUIT_THRESHOLD} consecutive failed calls (probes included) and up again at the first success`, async () => {
    storage.failNext(CIRCUIT_THRESHOLD - 1);
    for (let i = 0; i < CIRCUIT_THRESHOLD - 1; i++) await expect(gateway.createDisk(disk)).rejects.toBeInstanceOf(StepUnavailable);
    expect(gateway.isDown()).toBe(false);
    storage.down = true;
    await gateway.probeOnce();
    expect(gateway.isDown()).toBe(true);
    await gateway.probeOnce();
    expect(gateway.isDown()).toBe(true);
    storage.down = false;
    await gateway.createDisk(disk);
    expect(gateway.isDown()).toBe(false);
  });

  it('a success in between starts the count again', async () => {
    storage.failNext(CIRCUIT_THRESHOLD - 1);
    for (let i = 0; i < CIRCUIT_THRESHOLD - 1; i++) await expect(gateway.createDisk(disk)).rejects.toBeInstanceOf(StepUnavailable);
    await gateway.createDisk(disk);
    storage.failNext(CIRCUIT_THRESHOLD - 1);
    for (let i = 0; i < CIRCUIT_THRESHOLD - 1; i++) await expect(gateway.createDisk(disk)).rejects.toBeInstanceOf(StepUnavailable);
    expect(gateway.isDown()).toBe(false);
  });

  it("a DomainError is the provider's final answer: passed on as is, and the provider counts as up", async () => {
    storage.down = true;
    for (let i = 0; i < CIRCUIT_THRESHOLD; i++) await gateway.probeOnce();
    expect(gateway.isDown()).toBe(true);
    storage.down = false;
    await expect(gateway.attachDisk({ volumeId: 'vol_none', step: 's', serverId: 'vm_1' })).rejects.toEqual(
      new DomainError('invalid_state', 'The storage provider has no disk for volume vol_none'),
    );
    expect(gateway.isDown()).toBe(false);
  });

  it('is idempotent per (volume, step): the same call again answers as the first did, even when its answer was lost', async () => {
    storage.loseNextAnswer();
    await expect(gateway.createDisk(disk)).rejects.toBeInstanceOf(StepUnavailable);
    const again = await gateway.createDisk(disk);
    expect(await gateway.createDisk(disk)).toEqual(again);
    await gateway.attachDisk({ volumeId: 'vol_1', step: 'op_1/attaching', serverId: 'vm_1' });
    await gateway.attachDisk({ volumeId: 'vol_1', step: 'op_1/attaching', serverId: 'vm_1' });
    expect(storage.effective.map((c) => c.action)).toEqual(['create', 'attach']);
    expect(await storage.listDisks()).toEqual([{ ...again, serverId: 'vm_1' }]);
  });
});

/**
 * The worker's step retry (AdvanceOperations) with a FixedClock: provider_unavailable defers the
 * step (backoff, not an attempt), and 10 minutes after the first failure the operation fails
 * with provider_unavailable, its compensation run and its hold released.
 */
describe('AdvanceOperations: step backoff and the 10-minute give-up', () => {
  let clock: FixedClock;
  let storage: InMemoryBlockStorage;
  let operations: InMemoryOperationRepository;
  let wallet: InMemoryWalletLedger;
  let advance: AdvanceOperations;
  let compensated: string[];
  let failedHook: string[];

  beforeEach(async () => {
    clock = new FixedClock(NOW);
    storage = new InMemoryBlockStorage();
    operations = new InMemoryOperationRepository();
    wallet = new InMemoryWalletLedger();
    compensated = [];
    failedHook = [];
    const gateway = new ProviderGateway(storage);
    const executors = new OperationExecutors();
    executors.register({
      type: 'volume.create',
      steps: [
        {
          name: 'creating_volume',
          perform: async (op) => ({ disk_id: (await gateway.createDisk({ ...disk, volumeId: op.volumeId!, step: `${op.id}/creating_volume` })).diskId }),
          commit: async () => undefined,
        },
        { name: 'ready', commit: async (_op, performed) => ({ done: true, performed: performed ?? null }) },
      ],
      compensate: async (op) => {
        compensated.push(op.id);
      },
      failed: async (op) => {
        failedHook.push(op.id);
      },
    });
    advance = new AdvanceOperations(new InMemoryUnitOfWork(), operations, executors, wallet, clock, { ...loadSettings({}), workerLeaseMs: 30_000 });
    await wallet.credit('org_1', Money.parse('10.00000', 'USD'), 'test');
    await operations.create(
      Operation.create({
        id: 'op_1', orgId: 'org_1', type: 'volume.create', vmId: null, volumeId: 'vol_1', createdAt: NOW,
        steps: [{ name: 'creating_volume', status: 'pending' }, { name: 'ready', status: 'pending' }],
      }),
    );
    await wallet.hold('org_1', Money.parse('2.00000', 'USD'), 'op_1');
  });

  const state = async () => (await operations.findInOrg('org_1', 'op_1'))!.snapshot();

  it('defers the step 1 s, 2 s, 4 s … without counting attempts, then gives up 10 minutes after the first failure', async () => {
    storage.down = true;
    const waits: number[] = [];
    for (let i = 0; i < 100; i++) {
      const report = await advance.runOnce();
      expect(report.claimed).toBe(1);
      const s = await state();
      if (s.status === 'failed') break;
      expect(s).toMatchObject({ status: 'running', lockedBy: null, attempts: 0, steps: [{ name: 'creating_volume', status: 'running' }, { name: 'ready', status: 'pending' }] });
      const wait = s.lockedUntil!.getTime() - clock.now().getTime();
      waits.push(wait);
      // Not claimable before its time (nor at it: a lease ends after its instant).
      clock.advance(wait);
      expect((await advance.runOnce()).claimed).toBe(0);
      clock.advance(1);
    }
    // Retried at 1, 3, 7, 15, 31, 63 s, then every 60 s (each 1 ms after its time): the failure at 603 s is past 10 minutes.
    expect(waits).toEqual([1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000, 60000, 60000, 60000, 60000, 60000, 60000]);
    expect(waits.length + 1).toBeGreaterThan(MAX_ATTEMPTS);
    const s = await state();
    expect(s.status).toBe('failed');
    expect(s.error).toEqual({ code: 'provider_unavailable', message: 'The storage provider stayed unavailable for 10 minutes: down (test)' });
    expect(s.steps).toEqual([{ name: 'creating_volume', status: 'failed' }, { name: 'ready', status: 'pending' }]);
    expect(s.finishedAt).toEqual(new Date(NOW.getTime() + 603_015));
    expect(compensated).toEqual(['op_1']);
    expect(failedHook).toEqual(['op_1']);
    expect(wallet.entries.filter((e) => e.operationId === 'op_1').map((e) => e.kind)).toEqual(['hold', 'release']);
  });

  it('a provider back within the window: the step is retried once more and the operation succeeds, the hold captured', async () => {
    storage.failNext(3);
    for (const wait of [1000, 2000, 4000]) {
      await advance.runOnce();
      expect((await state()).stepFailures).toBeGreaterThan(0);
      clock.advance(wait + 1);
    }
    expect(await advance.runOnce()).toEqual({ claimed: 1, succeeded: 1, failed: 0, skipped: 0 });
    const s = await state();
    expect(s).toMatchObject({ status: 'succeeded', stepFailures: 0, stepFailingSince: null, attempts: 1 });
    expect(s.result).toEqual({ done: true, performed: null });
    expect(compensated).toEqual([]);
    expect(wallet.entries.filter((e) => e.operationId === 'op_1').map((e) => e.kind)).toEqual(['hold', 'capture']);
    expect(storage.effective.map((c) => c.action)).toEqual(['create']);
  });

  it('a DomainError from the provider fails the operation at once (no retry), compensated and released', async () => {
    storage.disks.set('vol_1', { diskId: 'd', volumeId: 'vol_1', zoneId: 'z', sizeGb: 10, type: 'premium', serverId: null, mountPath: null, mounted: false, deleted: true });
    expect(await advance.runOnce()).toEqual({ claimed: 1, succeeded: 0, failed: 1, skipped: 0 });
    const s = await state();
    expect(s.error).toEqual({ code: 'invalid_state', message: 'The disk of volume vol_1 was deleted; it cannot be created again' });
    expect(compensated).toEqual(['op_1']);
    expect(wallet.entries.filter((e) => e.operationId === 'op_1').map((e) => e.kind)).toEqual(['hold', 'release']);
  });
});

/** The orphan disk sweep (CleanUpOrphanDisks) against the in-memory provider: page by page, and it stops when told. */
describe('CleanUpOrphanDisks', () => {
  let storage: InMemoryBlockStorage;
  /** Volumes the service no longer has (deleted, nothing in flight). */
  let gone: Set<string>;
  let pages: ({ after: string | undefined; limit: number } | 'all')[];
  let sweep: CleanUpOrphanDisks;

  beforeEach(async () => {
    storage = new InMemoryBlockStorage();
    for (let i = 1; i <= 5; i++) await storage.createDisk({ ...disk, volumeId: `vol_${i}`, step: `op_${i}/creating_volume` });
    gone = new Set(['vol_1', 'vol_3', 'vol_5']);
    pages = [];
    const listDisks = storage.listDisks.bind(storage);
    storage.listDisks = async (page) => {
      pages.push(page ? { after: page.after, limit: page.limit } : 'all');
      return listDisks(page);
    };
    const states = { goneAmong: async (ids: readonly string[]) => ids.filter((id) => gone.has(id)), apply: async () => undefined } as unknown as VolumeStates;
    sweep = new CleanUpOrphanDisks(new ProviderGateway(storage), states);
  });

  it('walks the provider a page at a time and deletes the disks of gone volumes only, once', async () => {
    expect(await sweep.execute(() => false, 2)).toBe(3);
    expect(pages).toEqual([{ after: undefined, limit: 2 }, { after: 'vol_2', limit: 2 }, { after: 'vol_4', limit: 2 }]);
    expect((await storage.listDisks()).map((d) => d.volumeId)).toEqual(['vol_2', 'vol_4']);
    expect(storage.effective.filter((c) => c.action === 'delete')).toEqual(['vol_1', 'vol_3', 'vol_5'].map((volumeId) => ({ volumeId, step: 'orphan-cleanup', action: 'delete' })));
    expect(await sweep.execute(() => false, 2)).toBe(0);
  });

  it('stops between two disks once told to (shutdown), leaving the rest to the next sweep', async () => {
    let deletes = 0;
    const deleteDisk = storage.deleteDisk.bind(storage);
    storage.deleteDisk = async (input) => {
      deletes += 1;
      return deleteDisk(input);
    };
    expect(await sweep.execute(() => deletes >= 1, 10)).toBe(1);
    expect((await storage.listDisks()).map((d) => d.volumeId)).toEqual(['vol_2', 'vol_3', 'vol_4', 'vol_5']);
    expect(await sweep.execute(() => true, 10)).toBe(0);
    expect(deletes).toBe(1);
  });

  it('a disk the provider cannot delete now is left for the next sweep; the others go', async () => {
    const deleteDisk = storage.deleteDisk.bind(storage);
    storage.deleteDisk = async (input) => {
      if (input.volumeId === 'vol_3') throw new ProviderUnavailable('busy (test)');
      return deleteDisk(input);
    };
    expect(await sweep.execute(() => false, 10)).toBe(2);
    expect((await storage.listDisks()).map((d) => d.volumeId)).toEqual(['vol_2', 'vol_3', 'vol_4']);
  });
});
