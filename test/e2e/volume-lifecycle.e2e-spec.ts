import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { VerifyInvariants } from '../../src/modules/verification/application/verify-invariants.use-case';
import { TypeOrmInvariantChecks } from '../../src/modules/verification/infrastructure/typeorm-invariant-checks';
import { BlockStorage } from '../../src/modules/storage-provider/application/block-storage.port';
import { ComputeProvider } from '../../src/modules/servers/application/compute-provider.port';
import { Db, UnitOfWork } from '../../src/shared/database/transaction';
import { SystemClock, addMonthsClamped } from '../../src/shared/kernel/clock/clock';
import { OWNER_PASSWORD, apiToken, bearer, organization, region } from '../support/fixtures';
import { setProviderDown } from '../support/provider';
import { TestApp, startTestApp } from '../support/test-app';

/**
 * A disk's whole life over HTTP, as an integrator's first program runs it (issue 12 "Done when"):
 * buy (with and without a server) → the worker runs every step → succeeded with the documented
 * result, expires_at and charge; the options change accordingly; detach, attach, delete (with
 * and without ?detach=true, after turning delete_protection off) to their end states; the wallet,
 * the region counter and the provider's disks add up at every stage (cli verify).
 */
describe('a disk from purchase to deletion, over HTTP', () => {
  let t: TestApp;
  let advance: AdvanceOperations;
  const rw = bearer(apiToken('lc', 'rw'));
  let developer: { Authorization: string };
  let owner: { Authorization: string };

  beforeAll(async () => {
    t = await startTestApp({ providerRetryBaseMs: 1 });
    const base = organization('lc', { wallet: { USD: '100.00000', IDR: '1500000' } });
    await t.seed({
      regions: [
        {
          ...region('id-jkt'),
          capacity_gb: 1000,
          volume_offers: [
            { type: 'premium', min_gb: 10, max_gb: 4000, step_gb: 10, terms: [1, 3, 12], per_server_limit: 2, price_per_gb_month: { USD: '0.02000', IDR: '320' } },
          ],
        },
      ],
      organizations: [
        {
          ...base,
          members: [
            { email: 'owner@lc.test', password: OWNER_PASSWORD, role: 'owner' },
            { email: 'dev@lc.test', password: OWNER_PASSWORD, role: 'developer' },
          ],
          servers: [...base.servers, { id: 'vm_lcweb2', name: 'web-2', region: 'id-jkt', zone: 'id-jkt-a' }],
        },
      ],
    });
    advance = t.app.get(AdvanceOperations);
    const login = async (email: string) => bearer((await t.http.post('/v1/auth/login').send({ email, password: OWNER_PASSWORD })).body.token);
    developer = await login('dev@lc.test');
    owner = await login('owner@lc.test');
  });
  afterAll(async () => t?.close());
  afterEach(async () => {
    if (t.settings.providerDown) await setProviderDown(t, false);
  });

  const wallet = async () => (await t.http.get('/v1/wallet').set(rw)).body.balances;
  const usedGb = async () => (await t.sql<{ used_gb: string }>(`SELECT used_gb::text FROM region_usage WHERE id = 'id-jkt'`))[0].used_gb;
  const options = async () => (await t.http.get('/v1/volume-options?region=id-jkt').set(rw)).body;
  const getOp = async (id: string) => (await t.http.get(`/v1/operations/${id}`).set(rw)).body;
  const getVolume = async (id: string) => (await t.http.get(`/v1/volumes/${id}`).set(rw)).body;
  const runWorker = async () => {
    await advance.runUntilIdle();
  };
  /** cli verify's invariants, in process (both engines): capacity counter, server limits, provider disks = volumes, money. */
  const expectInvariantsHold = async (app: TestApp) => {
    const report = await new VerifyInvariants(app.app.get(UnitOfWork), new TypeOrmInvariantChecks(app.app.get(Db), app.app.get(BlockStorage), app.app.get(ComputeProvider)), new SystemClock()).execute();
    expect(report.violations).toEqual([]);
  };
  const providerDisk = async (volumeId: string) =>
    (await t.sql(`SELECT server_id, mount_path, mounted, deleted_at IS NOT NULL AS deleted FROM provider_disks WHERE volume_id = $1`, [volumeId]))[0];

  it('a purchase without a server: creating → available; expires_at and result from the success time; the hold captured', async () => {
    expect(await usedGb()).toBe('100');
    const res = await t.http.post('/v1/volumes').set(rw).set('Idempotency-Key', 'life-buy-1').send({ name: 'plain', region: 'id-jkt', size_gb: 100, term_months: 3, currency: 'USD' });
    expect(res.status).toBe(202);
    const { volume, operation } = res.body;
    expect(await wallet()).toEqual([
      { currency: 'USD', available: '94.00000', reserved: '6.00000' },
      { currency: 'IDR', available: '1500000', reserved: '0' },
    ]);
    await runWorker();
    const op = await getOp(operation.id);
    expect(op).toEqual({
      ...operation,
      status: 'succeeded',
      steps: [
        { name: 'payment_reserved', status: 'succeeded' },
        { name: 'creating_volume', status: 'succeeded' },
        { name: 'ready', status: 'succeeded' },
      ],
      result: { volume_id: volume.id, size_gb: 100, expires_at: expect.any(String), charged: { currency: 'USD', amount: '6.00000' } },
      finished_at: expect.any(String),
    });
    // The term runs from the success (the ready step's clock, in the transaction that ends the operation):
    // expires_at = then + 3 months (month-end clamp), within moments of finished_at + 3 months.
    expect(Math.abs(new Date(op.result.expires_at).getTime() - addMonthsClamped(new Date(op.finished_at), 3).getTime())).toBeLessThan(5_000);
    expect(new Date(op.result.expires_at).getTime()).toBeGreaterThan(addMonthsClamped(new Date(volume.created_at), 3).getTime() - 1);
    expect(await getVolume(volume.id)).toEqual({
      ...volume,
      status: 'available',
      expires_at: op.result.expires_at,
      term_months: 3,
      billing: { currency: 'USD', amount: '6.00000' },
    });
    expect(await wallet()).toEqual([
      { currency: 'USD', available: '94.00000', reserved: '0.00000' },
      { currency: 'IDR', available: '1500000', reserved: '0' },
    ]);
    expect(await t.sql(`SELECT kind, amount::text FROM wallet_ledger WHERE operation_id = $1 ORDER BY id`, [operation.id])).toEqual([
      { kind: 'hold', amount: '600000' },
      { kind: 'capture', amount: '600000' },
    ]);
    expect(await usedGb()).toBe('200');
    expect(await providerDisk(volume.id)).toEqual({ server_id: null, mount_path: null, mounted: false, deleted: false });
    // The replay after success is still the original 202 (pending), to the byte.
    const replay = await t.http.post('/v1/volumes').set(rw).set('Idempotency-Key', 'life-buy-1').send({ name: 'plain', region: 'id-jkt', size_gb: 100, term_months: 3, currency: 'USD' });
    expect(replay.text).toBe(res.text);
    await expectInvariantsHold(t);
  });

  it('a purchase with a server: attached and mounted at /mnt/<name>; the server leaves the options when full', async () => {
    expect((await options()).zones[0].servers).toEqual([
      { id: 'vm_lcweb1', name: 'web-1' },
      { id: 'vm_lcweb2', name: 'web-2' },
    ]);
    const res = await t.http.post('/v1/volumes').set(developer).send({ name: 'db', region: 'id-jkt', size_gb: 50, term_months: 1, currency: 'IDR', server_id: 'vm_lcweb1' });
    expect(res.status).toBe(202);
    // web-1 holds data-1 and db is on its way: full (limit 2) from the moment the purchase is accepted.
    expect((await options()).zones[0].servers).toEqual([{ id: 'vm_lcweb2', name: 'web-2' }]);
    await runWorker();
    const op = await getOp(res.body.operation.id);
    expect(op).toMatchObject({
      status: 'succeeded',
      vm_id: 'vm_lcweb1',
      steps: [
        { name: 'payment_reserved', status: 'succeeded' },
        { name: 'creating_volume', status: 'succeeded' },
        { name: 'attaching', status: 'succeeded' },
        { name: 'ready', status: 'succeeded' },
      ],
      result: { volume_id: res.body.volume.id, size_gb: 50, charged: { currency: 'IDR', amount: '16000' } },
      error: null,
    });
    expect(await getVolume(res.body.volume.id)).toEqual(
      expect.objectContaining({ status: 'attached', server: { id: 'vm_lcweb1', name: 'web-1' }, mount_path: '/mnt/db', mounted: true, billing: { currency: 'IDR', amount: '16000' } }),
    );
    expect((await options()).zones[0].servers).toEqual([{ id: 'vm_lcweb2', name: 'web-2' }]);
    expect(await providerDisk(res.body.volume.id)).toEqual({ server_id: 'vm_lcweb1', mount_path: '/mnt/db', mounted: true, deleted: false });
    expect(await wallet()).toEqual([
      { currency: 'USD', available: '94.00000', reserved: '0.00000' },
      { currency: 'IDR', available: '1484000', reserved: '0' },
    ]);
    await expectInvariantsHold(t);
  });

  it('detach → available; attach to another server → attached there; each operation ends succeeded with its result', async () => {
    const [db] = (await t.http.get('/v1/volumes?name=db').set(rw)).body.volumes;
    const det = await t.http.post(`/v1/volumes/${db.id}/detach`).set(rw);
    expect(det.status).toBe(202);
    expect(det.body.volume.status).toBe('attached');
    await runWorker();
    expect(await getOp(det.body.operation.id)).toMatchObject({
      status: 'succeeded',
      steps: [{ name: 'unmounting', status: 'succeeded' }, { name: 'detaching', status: 'succeeded' }],
      result: { volume_id: db.id, status: 'available' },
    });
    expect(await getVolume(db.id)).toEqual({ ...db, status: 'available', server: null, mount_path: null, mounted: false });
    expect((await options()).zones[0].servers).toEqual([
      { id: 'vm_lcweb1', name: 'web-1' },
      { id: 'vm_lcweb2', name: 'web-2' },
    ]);

    const att = await t.http.post(`/v1/volumes/${db.id}/attach`).set(rw).send({ server_id: 'vm_lcweb2', mount_path: '/srv/db' });
    expect(att.status).toBe(202);
    await runWorker();
    expect(await getOp(att.body.operation.id)).toMatchObject({
      status: 'succeeded',
      steps: [{ name: 'attaching', status: 'succeeded' }, { name: 'mounting', status: 'succeeded' }],
      result: { volume_id: db.id, status: 'attached' },
    });
    expect(await getVolume(db.id)).toEqual({ ...db, server: { id: 'vm_lcweb2', name: 'web-2' }, mount_path: '/srv/db' });
    expect(await providerDisk(db.id)).toEqual({ server_id: 'vm_lcweb2', mount_path: '/srv/db', mounted: true, deleted: false });
    await expectInvariantsHold(t);
  });

  it('delete: protected (a developer cannot turn it off, the owner can), then ?detach=true → deleted, capacity back, no refund', async () => {
    const [db] = (await t.http.get('/v1/volumes?name=db').set(rw)).body.volumes;
    expect((await t.http.patch(`/v1/volumes/${db.id}`).set(rw).send({ delete_protection: true })).status).toBe(200);
    expect((await t.http.delete(`/v1/volumes/${db.id}?detach=true`).set(rw)).body.error.message).toBe(
      `Volume ${db.id} has delete_protection on; turn it off (PATCH) before deleting it`,
    );
    expect((await t.http.patch(`/v1/volumes/${db.id}`).set(developer).send({ delete_protection: false })).status).toBe(403);
    expect((await t.http.patch(`/v1/volumes/${db.id}`).set(owner).send({ delete_protection: false })).status).toBe(200);
    const attached = await t.http.delete(`/v1/volumes/${db.id}`).set(rw);
    expect(attached.status).toBe(409);

    const before = await wallet();
    const used = Number(await usedGb());
    const del = await t.http.delete(`/v1/volumes/${db.id}?detach=true`).set(rw);
    expect(del.status).toBe(202);
    expect(del.body.volume).toEqual(expect.objectContaining({ status: 'deleting', server: { id: 'vm_lcweb2', name: 'web-2' } }));
    expect(String(used)).toBe(await usedGb());
    await runWorker();
    const op = await getOp(del.body.operation.id);
    expect(op).toMatchObject({
      status: 'succeeded',
      vm_id: 'vm_lcweb2',
      steps: [{ name: 'unmounting', status: 'succeeded' }, { name: 'detaching', status: 'succeeded' }, { name: 'deleting', status: 'succeeded' }],
      result: { volume_id: db.id, status: 'deleted' },
    });
    const gone = await getVolume(db.id);
    expect(gone).toEqual({ ...db, status: 'deleted', server: null, mount_path: null, mounted: false, delete_protection: false, deleted_at: expect.any(String), deleted_reason: 'customer' });
    expect(await usedGb()).toBe(String(used - 50));
    // No refund: the wallet is as it was.
    expect(await wallet()).toEqual(before);
    expect(await providerDisk(db.id)).toEqual({ server_id: null, mount_path: null, mounted: false, deleted: true });
    // Deleted: gone from the default listing, listed with status=deleted; its name is free again.
    expect((await t.http.get('/v1/volumes?name=db').set(rw)).body.volumes).toEqual([]);
    expect((await t.http.get('/v1/volumes?status=deleted').set(rw)).body.volumes.map((v: { id: string }) => v.id)).toEqual([db.id]);
    const again = await t.http.delete(`/v1/volumes/${db.id}`).set(rw);
    expect(again.body.error).toEqual(expect.objectContaining({ code: 'invalid_state', message: `Volume ${db.id} is deleted` }));
    await expectInvariantsHold(t);
  });

  it('delete of a detached disk: deleting at once, then deleted; its capacity back', async () => {
    const [plain] = (await t.http.get('/v1/volumes?name=plain').set(rw)).body.volumes;
    const used = Number(await usedGb());
    const del = await t.http.delete(`/v1/volumes/${plain.id}`).set(rw);
    expect(del.status).toBe(202);
    expect(await getVolume(plain.id)).toEqual(expect.objectContaining({ status: 'deleting' }));
    await runWorker();
    expect(await getOp(del.body.operation.id)).toMatchObject({ status: 'succeeded', steps: [{ name: 'deleting', status: 'succeeded' }], result: { volume_id: plain.id, status: 'deleted' } });
    expect(await getVolume(plain.id)).toEqual(expect.objectContaining({ status: 'deleted', deleted_at: expect.any(String) }));
    expect(await usedGb()).toBe(String(used - 100));
    await expectInvariantsHold(t);
  });

  it('PROVIDER_DOWN: new purchases and actions are 503 and reserve nothing; back up, they are accepted', async () => {
    const before = await wallet();
    const used = await usedGb();
    const ops = await t.sql(`SELECT count(*)::int AS n FROM operations`);
    await setProviderDown(t, true);
    const buy = await t.http.post('/v1/volumes').set(rw).send({ name: 'down', region: 'id-jkt', size_gb: 10, term_months: 1, currency: 'USD' });
    expect(buy.status).toBe(503);
    expect(buy.body.error.code).toBe('provider_unavailable');
    expect((await t.http.post('/v1/volumes/vol_lcdata1/detach').set(rw)).status).toBe(503);
    expect(await wallet()).toEqual(before);
    expect(await usedGb()).toBe(used);
    expect(await t.sql(`SELECT count(*)::int AS n FROM operations`)).toEqual(ops);
    const ready = await t.http.get('/v1/ready');
    expect(ready.status).toBe(200);
    await setProviderDown(t, false);
    const ok = await t.http.post('/v1/volumes').set(rw).send({ name: 'down', region: 'id-jkt', size_gb: 10, term_months: 1, currency: 'USD' });
    expect(ok.status).toBe(202);
    await runWorker();
    expect((await getOp(ok.body.operation.id)).status).toBe('succeeded');
    await expectInvariantsHold(t);
  });
});
