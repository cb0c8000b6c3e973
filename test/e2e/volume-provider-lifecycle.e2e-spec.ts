import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { CleanUpOrphanDisks } from '../../src/modules/volumes/application/clean-up-orphan-disks.use-case';
import { FixedClock } from '../../src/shared/kernel/clock/clock';
import { apiToken, bearer, organization, region } from '../support/fixtures';
import { setProviderDown } from '../support/provider';
import { TestApp, startTestApp } from '../support/test-app';
import { expectVerified } from '../support/verify';

const NOW = '2026-11-23T10:00:00.000Z';
/** When the worker runs the steps: the term starts here (lifecycle.md: success time + term_months). */
const LATER = '2026-11-30T08:15:00.000Z';

/**
 * Issue 12 end to end (both engines): the accepting routes create the operations, the worker
 * runs them step by step against the simulated storage provider, and the client reads the
 * operation, the volume, the wallet and the region counter as lifecycle.md promises; then a
 * provider that fails every call fails the purchase with everything given back.
 */
describe('disk lifecycle through the worker and the provider: purchase, attach, detach, delete, a failing provider', () => {
  let t: TestApp;
  const clock = new FixedClock(new Date(NOW));
  const rw = bearer(apiToken('lc', 'rw'));
  const ok = { region: 'id-jkt', size_gb: 100, term_months: 12, currency: 'USD' };

  beforeAll(async () => {
    t = await startTestApp({}, clock);
    await t.seed({
      regions: [region('id-jkt', { capacity_gb: 1000 })],
      organizations: [{ ...organization('lc'), volumes: [], servers: [{ id: 'vm_lcweb1', name: 'web-1', region: 'id-jkt', zone: 'id-jkt-a' }, { id: 'vm_lcweb2', name: 'web-2', region: 'id-jkt', zone: 'id-jkt-a' }] }],
    });
  });
  afterAll(async () => t?.close());
  beforeEach(() => clock.set(new Date(NOW)));

  const run = async () => {
    clock.set(new Date(LATER));
    return t.app.get(AdvanceOperations).runUntilIdle();
  };
  const wallet = async () => (await t.sql(`SELECT available::text, reserved::text FROM wallet_balances WHERE org_id = 'org_lc' AND currency = 'USD'`))[0];
  const usedGb = async () => (await t.sql<{ used_gb: string }>(`SELECT used_gb::text FROM region_usage WHERE id = 'id-jkt'`))[0].used_gb;
  const ledger = async (opId: string) => (await t.sql<{ kind: string; amount: string }>(`SELECT kind, amount::text FROM wallet_ledger WHERE operation_id = $1 ORDER BY id`, [opId]));
  const getOp = (id: string) => t.http.get(`/v1/operations/${id}`).set(rw);
  const getVolume = (id: string) => t.http.get(`/v1/volumes/${id}`).set(rw);
  const disk = async (volumeId: string) => (await t.sql(`SELECT server_id, mount_path, mounted, deleted_at IS NOT NULL AS deleted FROM provider_disks WHERE volume_id = $1`, [volumeId]))[0];

  it('a purchase without a server runs creating_volume and ready to succeeded: available, term from the success, charged once', async () => {
    const before = await wallet();
    const res = await t.http.post('/v1/volumes').set(rw).send({ ...ok, name: 'plain' });
    expect(res.status).toBe(202);
    const { id: volumeId } = res.body.volume;
    const { id: opId } = res.body.operation;
    expect(await wallet()).toEqual({ available: String(BigInt(before.available as string) - 2_400_000n), reserved: '2400000' });
    expect(await run()).toMatchObject({ succeeded: 1, failed: 0 });

    const op = await getOp(opId);
    expect(op.status).toBe(200);
    expect(op.body).toEqual({
      id: opId, type: 'volume.create', status: 'succeeded', vm_id: null, volume_id: volumeId,
      steps: [{ name: 'payment_reserved', status: 'succeeded' }, { name: 'creating_volume', status: 'succeeded' }, { name: 'ready', status: 'succeeded' }],
      result: { volume_id: volumeId, size_gb: 100, expires_at: '2027-11-30T08:15:00.000Z', charged: { currency: 'USD', amount: '24.00000' } },
      error: null, created_at: NOW, finished_at: LATER,
    });
    const volume = await getVolume(volumeId);
    expect(volume.body).toMatchObject({
      id: volumeId, name: 'plain', status: 'available', server: null, mount_path: null, mounted: false, term_months: 12,
      billing: { currency: 'USD', amount: '24.00000' }, expires_at: '2027-11-30T08:15:00.000Z',
    });
    expect(await wallet()).toEqual({ available: String(BigInt(before.available as string) - 2_400_000n), reserved: '0' });
    expect(await ledger(opId)).toEqual([{ kind: 'hold', amount: '2400000' }, { kind: 'capture', amount: '2400000' }]);
    expect(await disk(volumeId)).toEqual({ server_id: null, mount_path: null, mounted: false, deleted: false });
    await expectVerified(t);
  });

  it('a purchase with a server runs creating_volume, attaching and ready: attached and mounted at /mnt/<name>; then detach, attach elsewhere, delete with detach', async () => {
    const res = await t.http.post('/v1/volumes').set(rw).send({ ...ok, name: 'served', server_id: 'vm_lcweb1', term_months: 1 });
    expect(res.status).toBe(202);
    const { id: volumeId } = res.body.volume;
    const { id: opId } = res.body.operation;
    await run();
    expect((await getOp(opId)).body).toMatchObject({
      status: 'succeeded', vm_id: 'vm_lcweb1',
      steps: [
        { name: 'payment_reserved', status: 'succeeded' }, { name: 'creating_volume', status: 'succeeded' },
        { name: 'attaching', status: 'succeeded' }, { name: 'ready', status: 'succeeded' },
      ],
      // The 30th of November + 1 month: 30 December.
      result: { volume_id: volumeId, size_gb: 100, expires_at: '2026-12-30T08:15:00.000Z', charged: { currency: 'USD', amount: '2.00000' } },
    });
    expect((await getVolume(volumeId)).body).toMatchObject({ status: 'attached', server: { id: 'vm_lcweb1', name: 'web-1' }, mount_path: '/mnt/served', mounted: true });
    expect(await disk(volumeId)).toEqual({ server_id: 'vm_lcweb1', mount_path: '/mnt/served', mounted: true, deleted: false });

    const detach = await t.http.post(`/v1/volumes/${volumeId}/detach`).set(rw).send();
    expect(detach.status).toBe(202);
    await run();
    expect((await getOp(detach.body.operation.id)).body).toMatchObject({ status: 'succeeded', result: { volume_id: volumeId, status: 'available' } });
    expect((await getVolume(volumeId)).body).toMatchObject({ status: 'available', server: null, mount_path: null, mounted: false });

    const attach = await t.http.post(`/v1/volumes/${volumeId}/attach`).set(rw).send({ server_id: 'vm_lcweb2' });
    expect(attach.status).toBe(202);
    await run();
    expect((await getOp(attach.body.operation.id)).body).toMatchObject({
      status: 'succeeded', steps: [{ name: 'attaching', status: 'succeeded' }, { name: 'mounting', status: 'succeeded' }], result: { volume_id: volumeId, status: 'attached' },
    });
    expect((await getVolume(volumeId)).body).toMatchObject({ status: 'attached', server: { id: 'vm_lcweb2', name: 'web-2' }, mount_path: '/mnt/served', mounted: true });

    const used = await usedGb();
    const del = await t.http.delete(`/v1/volumes/${volumeId}?detach=true`).set(rw);
    expect(del.status).toBe(202);
    expect(del.body.volume.status).toBe('deleting');
    await run();
    expect((await getOp(del.body.operation.id)).body).toMatchObject({
      status: 'succeeded',
      steps: [{ name: 'unmounting', status: 'succeeded' }, { name: 'detaching', status: 'succeeded' }, { name: 'deleting', status: 'succeeded' }],
      result: { volume_id: volumeId, status: 'deleted' },
    });
    expect(await usedGb()).toBe(String(Number(used) - 100));
    expect(await disk(volumeId)).toEqual({ server_id: null, mount_path: null, mounted: false, deleted: true });
    const [row] = await t.sql(`SELECT status, server_id, deleted_at FROM volumes WHERE id = $1`, [volumeId]);
    expect(row).toEqual({ status: 'deleted', server_id: null, deleted_at: new Date(LATER) });
    await expectVerified(t);
  });

  it('a provider failing every call: the purchase fails with provider_unavailable after its retries; hold released, capacity back, volume deleted', async () => {
    const before = await wallet();
    const used = await usedGb();
    const res = await t.http.post('/v1/volumes').set(rw).send({ ...ok, name: 'doomed', server_id: 'vm_lcweb1' });
    expect(res.status).toBe(202);
    const { id: volumeId } = res.body.volume;
    const { id: opId } = res.body.operation;
    expect(await usedGb()).toBe(String(Number(used) + 100));
    t.settings.providerFaults = 1;
    t.settings.providerRetryWindowMs = 3_000;
    try {
      // The worker retries the step (1 s, then 2 s later), then the window is over.
      for (const at of ['2026-11-30T08:15:00.000Z', '2026-11-30T08:15:01.001Z', '2026-11-30T08:15:03.002Z']) {
        clock.set(new Date(at));
        await t.app.get(AdvanceOperations).runUntilIdle();
      }
    } finally {
      t.settings.providerFaults = 0;
      t.settings.providerRetryWindowMs = 600_000;
      await setProviderDown(t, false);
    }
    expect((await getOp(opId)).body).toEqual({
      id: opId, type: 'volume.create', status: 'failed', vm_id: 'vm_lcweb1', volume_id: volumeId,
      steps: [
        { name: 'payment_reserved', status: 'succeeded' }, { name: 'creating_volume', status: 'failed' },
        { name: 'attaching', status: 'pending' }, { name: 'ready', status: 'pending' },
      ],
      result: null,
      error: {
        code: 'provider_unavailable',
        message: expect.stringMatching(/^The storage provider stayed unavailable for 0\.1 minutes: The storage provider (failed the call|took the call but its answer was lost) \(PROVIDER_FAULTS\)$/),
      },
      created_at: NOW, finished_at: '2026-11-30T08:15:03.002Z',
    });
    expect((await t.http.get(`/v1/volumes?status=deleted&name=doomed`).set(rw)).body.volumes).toMatchObject([{ id: volumeId, status: 'deleted' }]);
    expect(await wallet()).toEqual(before);
    expect(await ledger(opId)).toEqual([{ kind: 'hold', amount: '2400000' }, { kind: 'release', amount: '2400000' }]);
    expect(await usedGb()).toBe(used);
    // A disk a lost answer left at the provider (the compensation could not reach it either) is
    // deleted by the sweep once the provider answers again; none is left.
    await t.app.get(CleanUpOrphanDisks).execute();
    expect([undefined, { server_id: null, mount_path: null, mounted: false, deleted: true }]).toContainEqual(await disk(volumeId));
    await expectVerified(t);
  });
});
