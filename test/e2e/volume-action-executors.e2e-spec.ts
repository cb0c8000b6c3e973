import { ReconcileVolumesWithProvider } from '../../src/modules/volumes/application/reconcile-volumes.use-case';
import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { OperationRepository } from '../../src/modules/operations/application/operations.port';
import { Operation, OperationStep } from '../../src/modules/operations/domain/operation';
import { VerifyInvariants } from '../../src/modules/verification/application/verify-invariants.use-case';
import { TypeOrmInvariantChecks } from '../../src/modules/verification/infrastructure/typeorm-invariant-checks';
import { BlockStorage } from '../../src/modules/storage-provider/application/block-storage.port';
import { ComputeProvider } from '../../src/modules/servers/application/compute-provider.port';
import { attachParams, deleteParams, purchaseParams } from '../../src/modules/volumes/application/volume-action-params';
import { CleanUpOrphanDisks } from '../../src/modules/volumes/application/clean-up-orphan-disks.use-case';
import { VolumeStates } from '../../src/modules/volumes/application/volume-states.port';
import { VolumeRepository } from '../../src/modules/volumes/application/volumes.port';
import { WalletLedger } from '../../src/modules/wallet/application/wallet.port';
import { Db, UnitOfWork } from '../../src/shared/database/transaction';
import { SystemClock, addMonthsClamped } from '../../src/shared/kernel/clock/clock';
import { newId } from '../../src/shared/kernel/ids/ids';
import { Money, pricePairOfMinor } from '../../src/shared/kernel/money/money';
import { organization, region } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';

/**
 * The worker's side of issue 12 on the real database (both engines): the operations are created
 * as the accepting requests create them (volume row, hold, operation, in one transaction, through
 * the repositories), then the worker (AdvanceOperations) runs them against the simulated storage
 * provider. Asserted: the operation, the volume row, the wallet's ledger, the region's counter,
 * the provider's disks and calls, and `cli verify`'s invariants.
 */
describe('volume.create / attach / detach / delete executed by the worker', () => {
  let t: TestApp;
  let advance: AdvanceOperations;
  const ORG = 'org_ex';
  const SERVER = 'vm_exweb1';
  const SERVER2 = 'vm_exweb2';
  const verify = () => new VerifyInvariants(t.app.get(UnitOfWork), new TypeOrmInvariantChecks(t.app.get(Db), t.app.get(BlockStorage), t.app.get(ComputeProvider)), new SystemClock()).execute();
  const usedGb = async () => Number((await t.sql<{ u: string }>(`SELECT used_gb::text AS u FROM region_usage WHERE id = 'id-jkt'`))[0].u);
  const ledger = async (opId: string) => (await t.sql<{ kind: string }>(`SELECT kind FROM wallet_ledger WHERE operation_id = $1 ORDER BY id`, [opId])).map((r) => r.kind);
  const wallet = async () => (await t.sql(`SELECT available::text AS available, reserved::text AS reserved FROM wallet_balances WHERE org_id = $1 AND currency = 'USD'`, [ORG]))[0];
  const volumeRow = async (id: string) =>
    (
      await t.sql(
        `SELECT status, server_id, mount_path, mounted, term_months, billing_currency, billing_amount::text AS billing_amount, expires_at, deleted_at IS NOT NULL AS deleted
           FROM volumes WHERE id = $1`,
        [id],
      )
    )[0];
  const disk = async (volumeId: string) =>
    (await t.sql(`SELECT server_id, mount_path, mounted, deleted_at IS NOT NULL AS deleted FROM provider_disks WHERE volume_id = $1`, [volumeId]))[0];
  const operation = async (id: string) => (await t.sql(`SELECT status, steps, result, error, attempts FROM operations WHERE id = $1`, [id]))[0];

  const pending = (...names: string[]): OperationStep[] => names.map((name) => ({ name, status: 'pending' }));

  /** What POST /v1/volumes does at acceptance: the volume `creating` (capacity counted), the operation, the hold. */
  async function acceptPurchase(name: string, o: { serverId?: string; sizeGb?: number } = {}): Promise<{ volumeId: string; opId: string; amount: Money }> {
    const sizeGb = o.sizeGb ?? 100;
    const amount = Money.parse('0.02000', 'USD').times(sizeGb);
    const volumeId = newId('vol');
    const opId = newId('op');
    const serverId = o.serverId ?? null;
    const mountPath = serverId ? `/mnt/${name}` : null;
    await t.app.get(UnitOfWork).run(async () => {
      await t.app.get(VolumeRepository).create({
        id: volumeId, orgId: ORG, name, status: 'creating', type: 'premium', regionId: 'id-jkt', zoneId: 'id-jkt-a', sizeGb, serverId: null, mountPath: null,
        mounted: false, termMonths: 1, billing: amount, price: pricePairOfMinor(2000n, 320n), expiresAt: addMonthsClamped(new Date(), 1), note: null, labels: {},
        deleteProtection: false,
      });
      await t.app.get(OperationRepository).create(
        Operation.create({
          id: opId, orgId: ORG, type: 'volume.create', vmId: serverId, volumeId, createdAt: new Date(),
          steps: [{ name: 'payment_reserved', status: 'succeeded' }, ...pending('creating_volume', ...(serverId ? ['attaching'] : []), 'ready')],
          params: purchaseParams.write({ sizeGb, type: 'premium', zoneId: 'id-jkt-a', serverId, mountPath, termMonths: 1, amount }),
        }),
      );
      await t.app.get(WalletLedger).hold(ORG, amount, opId);
    });
    return { volumeId, opId, amount };
  }

  async function accept(type: 'volume.attach' | 'volume.detach' | 'volume.delete', volumeId: string, o: { serverId?: string; detach?: boolean } = {}): Promise<string> {
    const opId = newId('op');
    await t.app.get(UnitOfWork).run(async () => {
      const steps =
        type === 'volume.attach' ? pending('attaching', 'mounting')
        : type === 'volume.detach' ? pending('unmounting', 'detaching')
        : pending(...(o.detach ? ['unmounting', 'detaching'] : []), 'deleting');
      const params =
        type === 'volume.attach' ? attachParams.write({ serverId: o.serverId!, mountPath: '/mnt/again' })
        : type === 'volume.delete' ? deleteParams.write({ detach: Boolean(o.detach) })
        : {};
      if (type === 'volume.delete') await t.app.get(VolumeStates).apply(volumeId, { status: 'deleting' });
      await t.app.get(OperationRepository).create(Operation.create({ id: opId, orgId: ORG, type, vmId: o.serverId ?? null, volumeId, createdAt: new Date(), steps, params }));
    });
    return opId;
  }

  beforeAll(async () => {
    t = await startTestApp({ providerRetryBaseMs: 1 });
    await t.seed({
      regions: [region('id-jkt', { capacity_gb: 2000 })],
      organizations: [
        {
          ...organization('ex'),
          wallet: { USD: '100.00000', IDR: '0' },
          servers: [
            { id: SERVER, name: 'web-1', region: 'id-jkt', zone: 'id-jkt-a' },
            { id: SERVER2, name: 'web-2', region: 'id-jkt', zone: 'id-jkt-a' },
          ],
        },
      ],
    });
    advance = t.app.get(AdvanceOperations);
  });
  afterAll(() => t.close());
  afterEach(() => {
    t.settings.providerDown = false;
    t.settings.providerRetryWindowMs = 600_000;
  });

  it('a purchase without a server runs every step to succeeded: available, term from success, billing, hold captured, a disk at the provider', async () => {
    const used = await usedGb();
    const { volumeId, opId } = await acceptPurchase('plain');
    expect(await usedGb()).toBe(used + 100);
    expect(await advance.runUntilIdle()).toMatchObject({ claimed: 1, succeeded: 1, failed: 0 });
    const op = await operation(opId);
    const [{ finished }] = await t.sql<{ finished: Date }>(`SELECT finished_at AS finished FROM operations WHERE id = $1`, [opId]);
    const expiresAt = addMonthsClamped(finished, 1);
    expect(op).toEqual({
      status: 'succeeded', attempts: 1, error: null,
      steps: [{ name: 'payment_reserved', status: 'succeeded' }, { name: 'creating_volume', status: 'succeeded' }, { name: 'ready', status: 'succeeded' }],
      result: { volume_id: volumeId, size_gb: 100, expires_at: expect.any(String), charged: { currency: 'USD', amount: '2.00000' } },
    });
    // The term starts at success (the ready step's clock, within the operation's closing transaction).
    const row = await volumeRow(volumeId);
    expect(Math.abs((row.expires_at as Date).getTime() - expiresAt.getTime())).toBeLessThan(5_000);
    expect((op.result as { expires_at: string }).expires_at).toBe((row.expires_at as Date).toISOString());
    expect(row).toEqual({ status: 'available', server_id: null, mount_path: null, mounted: false, term_months: 1, billing_currency: 'USD', billing_amount: '200000', expires_at: row.expires_at, deleted: false });
    expect(await ledger(opId)).toEqual(['hold', 'capture']);
    expect(await disk(volumeId)).toEqual({ server_id: null, mount_path: null, mounted: false, deleted: false });
    expect(await usedGb()).toBe(used + 100);
    expect((await verify()).violations).toEqual([]);
  });

  it('a purchase with a server: attached and mounted at the provider and on the volume', async () => {
    const { volumeId, opId } = await acceptPurchase('withserver', { serverId: SERVER });
    await advance.runUntilIdle();
    expect(await operation(opId)).toMatchObject({
      status: 'succeeded',
      steps: [
        { name: 'payment_reserved', status: 'succeeded' }, { name: 'creating_volume', status: 'succeeded' },
        { name: 'attaching', status: 'succeeded' }, { name: 'ready', status: 'succeeded' },
      ],
    });
    expect(await volumeRow(volumeId)).toMatchObject({ status: 'attached', server_id: SERVER, mount_path: '/mnt/withserver', mounted: true });
    expect(await disk(volumeId)).toEqual({ server_id: SERVER, mount_path: '/mnt/withserver', mounted: true, deleted: false });
    expect(await ledger(opId)).toEqual(['hold', 'capture']);
    expect((await verify()).violations).toEqual([]);
  });

  it('detach, attach to another server, and delete with detach: each recorded on the volume and at the provider, capacity given back at the end', async () => {
    const { volumeId } = await acceptPurchase('cycle', { serverId: SERVER });
    await advance.runUntilIdle();
    const detach = await accept('volume.detach', volumeId);
    await advance.runUntilIdle();
    expect(await operation(detach)).toMatchObject({ status: 'succeeded', result: { volume_id: volumeId, status: 'available' } });
    expect(await volumeRow(volumeId)).toMatchObject({ status: 'available', server_id: null, mount_path: null, mounted: false });
    expect(await disk(volumeId)).toEqual({ server_id: null, mount_path: null, mounted: false, deleted: false });

    const attach = await accept('volume.attach', volumeId, { serverId: SERVER2 });
    await advance.runUntilIdle();
    expect(await operation(attach)).toMatchObject({ status: 'succeeded', result: { volume_id: volumeId, status: 'attached' } });
    expect(await volumeRow(volumeId)).toMatchObject({ status: 'attached', server_id: SERVER2, mount_path: '/mnt/again', mounted: true });
    expect(await disk(volumeId)).toEqual({ server_id: SERVER2, mount_path: '/mnt/again', mounted: true, deleted: false });

    const used = await usedGb();
    const del = await accept('volume.delete', volumeId, { detach: true });
    await advance.runUntilIdle();
    const op = await operation(del);
    expect(op).toMatchObject({
      status: 'succeeded',
      steps: [{ name: 'unmounting', status: 'succeeded' }, { name: 'detaching', status: 'succeeded' }, { name: 'deleting', status: 'succeeded' }],
      result: { volume_id: volumeId, status: 'deleted' },
    });
    expect(await volumeRow(volumeId)).toMatchObject({ status: 'deleted', server_id: null, mounted: false, deleted: true });
    expect(await disk(volumeId)).toEqual({ server_id: null, mount_path: null, mounted: false, deleted: true });
    expect(await usedGb()).toBe(used - 100);
    // Two attaches of one volume were two calls at the provider (keyed by operation and step), each once.
    expect(await t.sql(`SELECT action, count(*)::int AS n FROM provider_calls WHERE volume_id = $1 GROUP BY action ORDER BY action`, [volumeId])).toEqual([
      { action: 'attach', n: 2 }, { action: 'create', n: 1 }, { action: 'delete', n: 1 }, { action: 'detach', n: 2 }, { action: 'mount', n: 2 }, { action: 'unmount', n: 2 },
    ]);
    expect((await verify()).violations).toEqual([]);
  });

  it('a provider that stays unavailable: the purchase fails with provider_unavailable after its retries, everything given back', async () => {
    const before = await wallet();
    const used = await usedGb();
    const { volumeId, opId } = await acceptPurchase('unlucky');
    t.settings.providerDown = true;
    t.settings.providerRetryWindowMs = 50;
    for (let i = 0; i < 200 && (await operation(opId)).status !== 'failed'; i++) {
      await advance.runUntilIdle();
      await new Promise((r) => setTimeout(r, 5));
    }
    const op = await operation(opId);
    expect(op).toMatchObject({
      status: 'failed',
      error: { code: 'provider_unavailable', message: expect.stringMatching(/^The storage provider stayed unavailable for .* minutes: The storage provider is down \(PROVIDER_DOWN\)$/) },
      steps: [{ name: 'payment_reserved', status: 'succeeded' }, { name: 'creating_volume', status: 'failed' }, { name: 'ready', status: 'pending' }],
      attempts: 1,
    });
    expect(await volumeRow(volumeId)).toMatchObject({ status: 'deleted', deleted: true });
    expect(await ledger(opId)).toEqual(['hold', 'release']);
    expect(await wallet()).toEqual(before);
    expect(await usedGb()).toBe(used);
    expect(await disk(volumeId)).toBeUndefined();
    t.settings.providerDown = false;
    expect((await verify()).violations).toEqual([]);
  });

  it('a step the provider refuses fails the purchase at once; the disk it did create is deleted there too', async () => {
    const used = await usedGb();
    const { volumeId, opId } = await acceptPurchase('refused', { serverId: SERVER });
    // The provider will refuse the attach: another server holds the disk it answers.
    await t.sql(`INSERT INTO provider_disks (disk_id, volume_id, zone_id, size_gb, type, server_id) VALUES ('disk_taken', $1, 'id-jkt-a', 100, 'premium', $2)`, [volumeId, SERVER2]);
    await advance.runUntilIdle();
    expect(await operation(opId)).toMatchObject({
      status: 'failed',
      error: { code: 'invalid_state', message: `The disk of volume ${volumeId} is attached to server ${SERVER2}` },
      steps: [
        { name: 'payment_reserved', status: 'succeeded' }, { name: 'creating_volume', status: 'succeeded' },
        { name: 'attaching', status: 'failed' }, { name: 'ready', status: 'pending' },
      ],
    });
    expect(await volumeRow(volumeId)).toMatchObject({ status: 'deleted', deleted: true, server_id: null });
    expect(await disk(volumeId)).toEqual({ server_id: null, mount_path: null, mounted: false, deleted: true });
    expect(await ledger(opId)).toEqual(['hold', 'release']);
    expect(await usedGb()).toBe(used);
    expect((await verify()).violations).toEqual([]);
  });

  it('a delete that fails while the provider cannot be read stays deleting; the reconciliation sweep returns it to what it is at the provider (available), nothing deleted', async () => {
    const { volumeId } = await acceptPurchase('keepme');
    await advance.runUntilIdle();
    const used = await usedGb();
    const del = await accept('volume.delete', volumeId);
    expect(await volumeRow(volumeId)).toMatchObject({ status: 'deleting' });
    t.settings.providerDown = true;
    t.settings.providerRetryWindowMs = 0;
    await advance.runUntilIdle();
    expect(await operation(del)).toMatchObject({ status: 'failed', error: { code: 'provider_unavailable' }, steps: [{ name: 'deleting', status: 'failed' }] });
    // The delete may have taken effect: never `available` before the provider says so.
    expect(await volumeRow(volumeId)).toMatchObject({ status: 'deleting', deleted: false });
    t.settings.providerDown = false;
    expect(await t.app.get(ReconcileVolumesWithProvider).execute()).toBe(1);
    expect(await volumeRow(volumeId)).toMatchObject({ status: 'available', deleted: false });
    expect(await disk(volumeId)).toMatchObject({ deleted: false });
    expect(await usedGb()).toBe(used);
    expect((await verify()).violations).toEqual([]);
  });

  it('a worker that died after the provider call and before recording it: the next claim resumes the same step, nothing created twice', async () => {
    const { volumeId, opId } = await acceptPurchase('crashed');
    // What a crashed worker leaves: the step running under a lease that ended, the provider's call made.
    await t.sql(
      `UPDATE operations SET status = 'running', attempts = 1, locked_by = 'dead:1:x', locked_until = now() - interval '1 second', started_at = now(),
              steps = jsonb_set(steps, '{1,status}', '"running"') WHERE id = $1`,
      [opId],
    );
    const first = await t.app.get(BlockStorage).createDisk({ volumeId, step: `${opId}/creating_volume`, zoneId: 'id-jkt-a', sizeGb: 100, type: 'premium' });
    await advance.runUntilIdle();
    expect(await operation(opId)).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(await t.sql(`SELECT disk_id FROM provider_disks WHERE volume_id = $1`, [volumeId])).toEqual([{ disk_id: first.diskId }]);
    expect(await t.sql(`SELECT action FROM provider_calls WHERE volume_id = $1`, [volumeId])).toEqual([{ action: 'create' }]);
    expect(await ledger(opId)).toEqual(['hold', 'capture']);
  });

  it('a disk left at the provider for a deleted volume (its compensation could not reach it) is reported by verify and deleted by the sweep', async () => {
    const { volumeId, opId } = await acceptPurchase('orphan');
    await t.app.get(BlockStorage).createDisk({ volumeId, step: `${opId}/creating_volume`, zoneId: 'id-jkt-a', sizeGb: 100, type: 'premium' });
    // The purchase failed while the provider was unreachable: the volume is given back, its disk stays.
    await t.sql(`UPDATE operations SET status = 'failed', error = '{"code":"provider_unavailable","message":"x"}', finished_at = now() WHERE id = $1`, [opId]);
    await t.app.get(WalletLedger).release(opId);
    await t.app.get(VolumeStates).apply(volumeId, { status: 'deleted', deletedAt: new Date() });
    expect((await verify()).violations).toEqual([
      expect.objectContaining({ check: 'provider.disks_match_volumes', subject: volumeId, message: expect.stringMatching(/^volume is deleted but its disk disk_\w+ still exists at the provider$/) }),
    ]);
    expect(await t.app.get(CleanUpOrphanDisks).execute()).toBe(1);
    expect(await disk(volumeId)).toEqual({ server_id: null, mount_path: null, mounted: false, deleted: true });
    expect(await t.app.get(CleanUpOrphanDisks).execute()).toBe(0);
    expect((await verify()).violations).toEqual([]);
  });

  it('with PROVIDER_FAULTS=0.3 every operation still ends (succeeded, or failed with provider_unavailable after its retries); money and capacity add up', async () => {
    const used = await usedGb();
    const bought = [];
    for (let i = 0; i < 8; i++) bought.push(await acceptPurchase(`faulty-${i}`, { serverId: i % 2 === 0 ? SERVER2 : undefined, sizeGb: 10 }));
    t.settings.providerFaults = 0.3;
    t.settings.providerRetryWindowMs = 300;
    try {
      const open = async () => Number((await t.sql<{ n: string }>(`SELECT count(*) AS n FROM operations WHERE status IN ('pending', 'running')`))[0].n);
      for (let i = 0; i < 2000 && (await open()) > 0; i++) {
        await advance.runUntilIdle();
        await new Promise((r) => setTimeout(r, 2));
      }
      expect(await open()).toBe(0);
    } finally {
      t.settings.providerFaults = 0;
      t.settings.providerRetryWindowMs = 600_000;
    }
    let live = 0;
    for (const b of bought) {
      const op = await operation(b.opId);
      const row = await volumeRow(b.volumeId);
      if (op.status === 'succeeded') {
        live += 10;
        expect(row.deleted).toBe(false);
        expect(await ledger(b.opId)).toEqual(['hold', 'capture']);
      } else {
        expect(op).toMatchObject({ status: 'failed', error: { code: 'provider_unavailable' } });
        expect(row).toMatchObject({ status: 'deleted', deleted: true });
        expect(await ledger(b.opId)).toEqual(['hold', 'release']);
      }
    }
    expect(await usedGb()).toBe(used + live);
    // Disks a failed purchase could not delete (its compensation failed too) go with the sweep.
    await t.app.get(CleanUpOrphanDisks).execute();
    expect((await verify()).violations).toEqual([]);
  });
});
