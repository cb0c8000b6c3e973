import { Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { CleanUpOrphanImages } from '../../src/modules/images/application/clean-up-orphan-images.use-case';
import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { ComputeProvider } from '../../src/modules/servers/application/compute-provider.port';
import { CleanUpOrphanSnapshots } from '../../src/modules/snapshots/application/clean-up-orphan-snapshots.use-case';
import { BlockStorage } from '../../src/modules/storage-provider/application/block-storage.port';
import { VerifyInvariants } from '../../src/modules/verification/application/verify-invariants.use-case';
import { apiToken, bearer, organization } from '../support/fixtures';
import { waitFor } from '../support/renewals';
import { IMAGES, SERVER_PLANS, serverRegion } from '../support/servers';
import { TestApp, startTestApp } from '../support/test-app';

const SNAPSHOT_PRICE = { USD: '0.01000', IDR: '160' };
const UNKNOWN_SNAPSHOT = 'snap_ocunknown0000000000000';
const BUSY_SNAPSHOT = 'snap_ocbusy000000000000000';
const UNKNOWN_IMAGE = 'img_ocunknown00000000000000';
const BUSY_IMAGE = 'img_ocbusy0000000000000000';

/**
 * The orphan sweeps of the prepaid copies (storage-provider.md "The orphan sweeps", servers.md
 * "The orphan instance sweep"): every ORPHAN_DISK_SWEEP_INTERVAL_MS (snapshots) and
 * ORPHAN_INSTANCE_SWEEP_INTERVAL_MS (server images) in worker processes, the copies a provider
 * holds whose row is deleted or unknown and that no unfinished operation names are deleted there;
 * a live copy, and one whose operation is still running, are kept.
 */
describe('the orphan snapshot and image sweeps', () => {
  let t: TestApp;
  let advance: AdvanceOperations;
  const rw = bearer(apiToken('oc', 'rw'));
  const ids: Record<string, string> = {};
  const ops: Record<string, string> = {};

  beforeAll(async () => {
    // No worker in the test's process: the test drives the operations' steps itself; a step the provider cannot answer fails at once.
    t = await startTestApp({ providerRetryWindowMs: 0 });
    await t.seed({
      server_plans: SERVER_PLANS,
      images: IMAGES,
      regions: [serverRegion('id-jkt', 256, { snapshot_price_per_gb_month: SNAPSHOT_PRICE })],
      organizations: [organization('oc')],
    });
    advance = t.app.get(AdvanceOperations);
    const res = await t.http.post('/v1/servers').set(rw).send({ name: 'src', region: 'id-jkt', plan: 'cx1', image: 'debian-12', term_months: 1, currency: 'USD' });
    expect(res.status).toBe(202);
    ids.server = res.body.server.id;
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1, failed: 0 });
  });
  afterAll(async () => t?.close());

  const snapshot = async (name: string) => {
    const res = await t.http.post('/v1/volumes/vol_ocdata1/snapshots').set(rw).send({ name, term_months: 1, currency: 'USD' });
    expect(res.status).toBe(202);
    ids[name] = res.body.snapshot.id;
    ops[name] = res.body.operation.id;
  };
  const image = async (name: string) => {
    const res = await t.http.post(`/v1/servers/${ids.server}/images`).set(rw).send({ name, term_months: 1, currency: 'USD' });
    expect(res.status).toBe(202);
    ids[name] = res.body.image.id;
    ops[name] = res.body.operation.id;
  };
  const liveSnapshots = async () =>
    (await t.sql<{ snapshot_id: string }>(`SELECT snapshot_id FROM provider_snapshots WHERE deleted_at IS NULL ORDER BY snapshot_id`)).map((r) => r.snapshot_id);
  const liveImages = async () => (await t.sql<{ image_id: string }>(`SELECT image_id FROM provider_images WHERE deleted_at IS NULL ORDER BY image_id`)).map((r) => r.image_id);
  const rows = (table: string, names: string[]) =>
    t.sql(`SELECT id, status, deleted_reason FROM ${table} WHERE id = ANY($1::text[]) ORDER BY id`, [names.map((n) => ids[n])]);
  const findings = async () =>
    (await t.app.get(VerifyInvariants).execute()).violations
      .filter((v) => v.check === 'provider.snapshots_match' || v.check === 'provider.images_match')
      .map((v) => ({ check: v.check, subject: v.subject, message: v.message }));
  const sorted = (xs: string[]) => [...xs].sort();

  it('a process that runs the worker schedules both sweeps, which delete a copy of no known snapshot or image; one that does not, does not', async () => {
    const registry = t.app.get(SchedulerRegistry);
    expect(['orphan-snapshot-sweep', 'orphan-image-sweep'].map((n) => registry.doesExist('interval', n))).toEqual([false, false]);
    const worker = await startTestApp({ workerEnabled: true, workerIntervalMs: 3_600_000, orphanDiskSweepIntervalMs: 200, orphanInstanceSweepIntervalMs: 200 });
    try {
      const scheduled = worker.app.get(SchedulerRegistry);
      expect(['orphan-snapshot-sweep', 'orphan-image-sweep'].map((n) => scheduled.doesExist('interval', n))).toEqual([true, true]);
      // Copies the service never knew of, as a provider would hold them.
      await worker.sql(`INSERT INTO provider_snapshots (snapshot_id, provider_id, volume_id, zone_id, size_gb, type, data_marker) VALUES ($1, 'psnap_x', 'vol_x', 'id-jkt-a', 10, 'premium', 'disk_x')`, [UNKNOWN_SNAPSHOT]);
      await worker.sql(`INSERT INTO provider_images (image_id, provider_id, server_id, zone_id, disk_gb, source_image) VALUES ($1, 'pimg_x', 'vm_x', 'id-jkt-a', 40, 'debian-12')`, [UNKNOWN_IMAGE]);
      await waitFor(
        'the scheduled sweeps to delete both copies',
        async () =>
          (await worker.sql(`SELECT 1 FROM provider_snapshots WHERE deleted_at IS NULL UNION ALL SELECT 1 FROM provider_images WHERE deleted_at IS NULL`)).length === 0,
        15_000,
        100,
      );
    } finally {
      await worker.close();
    }
  });

  it('deletes, a page at a time, the copies of failed purchases and unknown ones; keeps live copies and those an unfinished operation names; verify holds after', async () => {
    const logged = jest.spyOn(Logger.prototype, 'log');
    try {
      // Live: bought and made.
      await snapshot('live');
      await image('golden');
      expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 2, failed: 0 });

      // Failed purchases whose copy the provider kept: the copy call took effect but its answer was
      // lost, then the provider stayed unreachable through the retry window and the compensation.
      await snapshot('lost');
      await image('lostimg');
      await t.app.get(BlockStorage).createSnapshot({ snapshotId: ids.lost, step: `${ops.lost}/snapshotting`, volumeId: 'vol_ocdata1' });
      await t.app.get(ComputeProvider).createImage({ imageId: ids.lostimg, step: `${ops.lostimg}/imaging`, serverId: ids.server });
      t.settings.providerDown = true;
      try {
        expect(await advance.runUntilIdle()).toMatchObject({ claimed: 2, failed: 2 });
      } finally {
        t.settings.providerDown = false;
      }
      for (const name of ['lost', 'lostimg']) {
        expect((await t.http.get(`/v1/operations/${ops[name]}`).set(rw)).body).toMatchObject({ status: 'failed', error: { code: 'provider_unavailable' } });
      }

      // In flight: accepted, the provider's copy made by a step whose operation has not ended.
      await snapshot('inflight');
      await image('inflightimg');
      await t.app.get(BlockStorage).createSnapshot({ snapshotId: ids.inflight, step: `${ops.inflight}/snapshotting`, volumeId: 'vol_ocdata1' });
      await t.app.get(ComputeProvider).createImage({ imageId: ids.inflightimg, step: `${ops.inflightimg}/imaging`, serverId: ids.server });

      // Copies of no known snapshot or image; of two of them, an unfinished operation names the copy.
      await t.app.get(BlockStorage).createSnapshot({ snapshotId: UNKNOWN_SNAPSHOT, step: 'op_x/snapshotting', volumeId: 'vol_ocdata1' });
      await t.app.get(BlockStorage).createSnapshot({ snapshotId: BUSY_SNAPSHOT, step: 'op_y/snapshotting', volumeId: 'vol_ocdata1' });
      await t.app.get(ComputeProvider).createImage({ imageId: UNKNOWN_IMAGE, step: 'op_x/imaging', serverId: ids.server });
      await t.app.get(ComputeProvider).createImage({ imageId: BUSY_IMAGE, step: 'op_y/imaging', serverId: ids.server });
      await t.sql(
        `INSERT INTO operations (id, org_id, type, status, steps, params) VALUES
           ('op_ocbusysnap000000000000', 'org_oc', 'snapshot.delete', 'running', '[]', $1),
           ('op_ocbusyimg0000000000000', 'org_oc', 'image.delete', 'pending', '[]', $2)`,
        [JSON.stringify({ snapshot_id: BUSY_SNAPSHOT, volume_id: 'vol_ocdata1' }), JSON.stringify({ image_id: BUSY_IMAGE, server_id: ids.server })],
      );

      expect(await rows('snapshots', ['live', 'lost', 'inflight'])).toEqual(sorted([ids.live, ids.lost, ids.inflight]).map((id) => ({
        id, status: id === ids.live ? 'available' : id === ids.lost ? 'deleted' : 'creating', deleted_reason: id === ids.lost ? 'purchase_failed' : null,
      })));
      expect(await rows('server_images', ['golden', 'lostimg', 'inflightimg'])).toEqual(sorted([ids.golden, ids.lostimg, ids.inflightimg]).map((id) => ({
        id, status: id === ids.golden ? 'available' : id === ids.lostimg ? 'deleted' : 'creating', deleted_reason: id === ids.lostimg ? 'purchase_failed' : null,
      })));
      expect(await liveSnapshots()).toEqual(sorted([ids.live, ids.lost, ids.inflight, UNKNOWN_SNAPSHOT, BUSY_SNAPSHOT]));
      expect(await liveImages()).toEqual(sorted([ids.golden, ids.lostimg, ids.inflightimg, UNKNOWN_IMAGE, BUSY_IMAGE]));
      // cli verify names the failed purchases' copies and the unknown ones.
      expect(await findings()).toEqual([
        { check: 'provider.snapshots_match', subject: ids.lost, message: 'deleted snapshot still exists at the storage provider' },
        ...sorted([UNKNOWN_SNAPSHOT, BUSY_SNAPSHOT]).map((subject) => ({ check: 'provider.snapshots_match', subject, message: 'the storage provider holds a snapshot of no known snapshot' })),
        { check: 'provider.images_match', subject: ids.lostimg, message: 'deleted image still exists at the compute provider' },
        ...sorted([UNKNOWN_IMAGE, BUSY_IMAGE]).map((subject) => ({ check: 'provider.images_match', subject, message: 'the compute provider holds an image of no known server image' })),
      ]);

      const snapshots = t.app.get(CleanUpOrphanSnapshots);
      const images = t.app.get(CleanUpOrphanImages);
      logged.mockClear();
      expect(await snapshots.execute(() => false, 2)).toBe(2);
      expect(await images.execute(() => false, 2)).toBe(2);
      expect(await liveSnapshots()).toEqual(sorted([ids.live, ids.inflight, BUSY_SNAPSHOT]));
      expect(await liveImages()).toEqual(sorted([ids.golden, ids.inflightimg, BUSY_IMAGE]));
      const lines = logged.mock.calls.map(([line]) => line as { msg: string; snapshot_id?: string; image_id?: string });
      expect(lines.filter((l) => /orphan|deleted the copy/.test(l.msg)).map(({ msg, snapshot_id, image_id }) => ({ msg, id: snapshot_id ?? image_id }))).toEqual([
        ...sorted([ids.lost, UNKNOWN_SNAPSHOT]).map((id) => ({ msg: 'deleted the copy of a deleted snapshot at the provider', id })),
        ...sorted([ids.lostimg, UNKNOWN_IMAGE]).map((id) => ({ msg: 'deleted the copy of a deleted server image at the provider', id })),
      ]);
      // Once: the next sweeps find nothing more to delete.
      expect(await snapshots.execute(() => false, 2)).toBe(0);
      expect(await images.execute(() => false, 2)).toBe(0);
      // The rows are as they were: the sweep only deletes at the provider.
      expect(await rows('snapshots', ['live', 'lost', 'inflight'])).toHaveLength(3);
      expect(await t.sql(`SELECT id FROM snapshots WHERE status <> 'deleted' ORDER BY id`)).toEqual(sorted([ids.live, ids.inflight]).map((id) => ({ id })));
      expect(await t.sql(`SELECT id FROM server_images WHERE status <> 'deleted' ORDER BY id`)).toEqual(sorted([ids.golden, ids.inflightimg]).map((id) => ({ id })));

      // The operations in flight end: theirs are made (charged once); the others' copies go at the next sweep.
      await t.sql(`UPDATE operations SET status = 'failed', error = '{"code":"internal","message":"x"}', finished_at = now() WHERE id IN ('op_ocbusysnap000000000000', 'op_ocbusyimg0000000000000')`);
      expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 2, failed: 0 });
      expect(await snapshots.execute()).toBe(1);
      expect(await images.execute()).toBe(1);
      expect(await liveSnapshots()).toEqual(sorted([ids.live, ids.inflight]));
      expect(await liveImages()).toEqual(sorted([ids.golden, ids.inflightimg]));
      expect(await t.sql(`SELECT id, status FROM snapshots WHERE status <> 'deleted' ORDER BY id`)).toEqual(sorted([ids.live, ids.inflight]).map((id) => ({ id, status: 'available' })));
      expect(await t.sql(`SELECT id, status FROM server_images WHERE status <> 'deleted' ORDER BY id`)).toEqual(sorted([ids.golden, ids.inflightimg]).map((id) => ({ id, status: 'available' })));
      expect(await findings()).toEqual([]);
      const report = await t.app.get(VerifyInvariants).execute();
      expect(report.violations.filter((v) => v.check !== 'webhooks.deliveries_on_schedule')).toEqual([]);
    } finally {
      logged.mockRestore();
    }
  });

  it('stops between two copies when told, and a provider that is down leaves everything for the next sweep', async () => {
    await t.app.get(BlockStorage).createSnapshot({ snapshotId: 'snap_ocstop1000000000000000', step: 'op_z/snapshotting', volumeId: 'vol_ocdata1' });
    await t.app.get(ComputeProvider).createImage({ imageId: 'img_ocstop10000000000000000', step: 'op_z/imaging', serverId: ids.server });
    const snapshots = t.app.get(CleanUpOrphanSnapshots);
    const images = t.app.get(CleanUpOrphanImages);
    expect(await snapshots.execute(() => true)).toBe(0);
    expect(await images.execute(() => true)).toBe(0);
    t.settings.providerDown = true;
    try {
      await expect(snapshots.execute()).rejects.toThrow('The storage provider is down (PROVIDER_DOWN)');
      await expect(images.execute()).rejects.toThrow('The compute provider is down (PROVIDER_DOWN)');
    } finally {
      t.settings.providerDown = false;
    }
    expect(await liveSnapshots()).toEqual(sorted([ids.live, ids.inflight, 'snap_ocstop1000000000000000']));
    expect(await liveImages()).toEqual(sorted([ids.golden, ids.inflightimg, 'img_ocstop10000000000000000']));
    expect(await snapshots.execute()).toBe(1);
    expect(await images.execute()).toBe(1);
    expect(await liveSnapshots()).toEqual(sorted([ids.live, ids.inflight]));
    expect(await liveImages()).toEqual(sorted([ids.golden, ids.inflightimg]));
  });
});
