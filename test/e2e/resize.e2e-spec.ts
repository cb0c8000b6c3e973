import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { ProviderGateway } from '../../src/modules/storage-provider/application/provider-gateway';
import { ComputeGateway } from '../../src/modules/servers/application/compute-gateway';
import { IMAGES, SERVER_PLANS, serverRegion } from '../support/servers';
import { DomainError } from '../../src/shared/kernel/errors/domain-error';
import { FixedClock } from '../../src/shared/kernel/clock/clock';
import { usingPostgres } from '../support/database';
import { ReconcileVolumesWithProvider } from '../../src/modules/volumes/application/reconcile-volumes.use-case';
import { VerifyInvariants } from '../../src/modules/verification/application/verify-invariants.use-case';
import { TypeOrmInvariantChecks } from '../../src/modules/verification/infrastructure/typeorm-invariant-checks';
import { BlockStorage } from '../../src/modules/storage-provider/application/block-storage.port';
import { ComputeProvider } from '../../src/modules/servers/application/compute-provider.port';
import { Db, UnitOfWork } from '../../src/shared/database/transaction';
import { SystemClock } from '../../src/shared/kernel/clock/clock';
import { apiToken, bearer, organization, orgWithDetachedVolumes, region } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';

/**
 * Growing a disk, changing a server's plan, reinstalling a server, priced for the rest of the
 * term: r = (expires_at − now) / 30 days in seconds. Every seeded volume expires 2026-12-21T00:00Z
 * and the clock stands at 2026-11-22T10:00Z: 2,469,600 s left, r = 2469600 / 2592000.
 */
const NOW = '2026-11-22T10:00:00.000Z';
const OP_ID = /^op_[A-Za-z0-9]{24}$/;
const describeOnPostgres = usingPostgres() ? describe : describe.skip;

/** An organization whose one volume (vol_<suffix>data1, 100 GB premium at 0.02 USD, attached to vm_<suffix>web1) has the given fields. */
function org(suffix: string, volume: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  const base = organization(suffix);
  return { ...base, volumes: [{ ...base.volumes[0], ...volume }], ...extra };
}

describe('resize: grow a disk, change a plan, reinstall', () => {
  let t: TestApp;
  const clock = new FixedClock(new Date(NOW));

  beforeAll(async () => {
    t = await startTestApp({ dbPoolSize: 20 }, clock);
    await t.seed({
      server_plans: SERVER_PLANS,
      images: IMAGES,
      regions: [serverRegion('id-jkt', 256), region('sg-sin', { capacity_gb: 900 })],
      organizations: [
        org('grow'),
        org('idrv', { currency: 'IDR' }),
        org('rfsd'),
        org('busy'),
        org('susp', { server: undefined, mount_path: undefined }),
        org('poor', {}, { wallet: { USD: '1.00000' } }),
        org('fail'),
        org('renw', { server: undefined, mount_path: undefined }),
        org('lost'),
        org('dry'),
        // sg-sin holds 900 GB: 20 disks of 20 GB (400), so five resizes of +100 fit, a sixth does not.
        orgWithDetachedVolumes('many', 20, { USD: '100.00000' }, { region: 'sg-sin', zone: 'sg-sin-a', size_gb: 20 }),
        orgWithDetachedVolumes('race', 1, { USD: '100.00000' }),
        organization('srv'),
      ],
    });
  });
  afterAll(async () => t?.close());

  const resize = (suffix: string, body: object, volumeId = `vol_${suffix}data1`) =>
    t.http.post(`/v1/volumes/${volumeId}/resize`).set(bearer(apiToken(suffix, 'rw'))).send(body);
  const balances = (orgId: string) =>
    t.sql(`SELECT currency, available::text AS available, reserved::text AS reserved FROM wallet_balances WHERE org_id = $1 ORDER BY currency`, [orgId]);
  const ledger = (orgId: string) =>
    t.sql(`SELECT kind, currency, amount::text AS amount, operation_id FROM wallet_ledger WHERE org_id = $1 AND kind <> 'credit' ORDER BY id`, [orgId]);
  const usedGb = async (regionId = 'id-jkt') => Number((await t.sql<{ used_gb: string }>(`SELECT used_gb::text FROM region_usage WHERE id = $1`, [regionId]))[0].used_gb);
  const runWorker = () => t.app.get(AdvanceOperations).runUntilIdle();
  /** `cli verify`'s checks in this process: the violations whose subject is one of `subjects`. */
  const violationsOf = async (...subjects: string[]) => {
    const checks = new TypeOrmInvariantChecks(t.app.get(Db), t.app.get(BlockStorage), t.app.get(ComputeProvider));
    const report = await new VerifyInvariants(t.app.get(UnitOfWork), checks, new SystemClock()).execute();
    return report.violations.filter((v) => subjects.some((s) => v.subject.includes(s))).map((v) => [v.check, v.subject]);
  };

  describe('POST /v1/volumes/{id}/resize', () => {
    it('dry_run answers the price for the rest of the term and changes nothing', async () => {
      const before = await usedGb();
      const res = await resize('dry', { size_gb: 200, dry_run: true });
      expect(res.status).toBe(200);
      // 100 GB × 0.02 USD × 2469600 / 2592000 = 1.905555… USD, rounded up to 1.90556.
      expect(res.body).toEqual({ amount: { currency: 'USD', amount: '1.90556' } });
      expect(await usedGb()).toBe(before);
      expect(await ledger('org_dry')).toEqual([]);
      expect(await t.sql(`SELECT id FROM operations WHERE org_id = 'org_dry'`)).toEqual([]);
    });

    it('grows an attached disk: 202 with a hold of the dry run\'s price and the gigabytes reserved; the worker resizes and captures once', async () => {
      const dry = await resize('grow', { size_gb: 200, dry_run: true });
      const usedBefore = await usedGb();
      const res = await resize('grow', { size_gb: 200 });
      expect(res.status).toBe(202);
      const opId: string = res.body.operation.id;
      expect(opId).toMatch(OP_ID);
      expect(res.headers.location).toBe(`/v1/operations/${opId}`);
      expect(res.body.volume).toMatchObject({ id: 'vol_growdata1', size_gb: 100, status: 'attached', expires_at: '2026-12-21T00:00:00.000Z' });
      expect(res.body.operation).toEqual({
        id: opId, type: 'volume.resize', status: 'pending', vm_id: 'vm_growweb1', volume_id: 'vol_growdata1',
        steps: [{ name: 'payment_reserved', status: 'succeeded' }, { name: 'resizing', status: 'pending' }],
        result: null, error: null, created_at: NOW, finished_at: null,
      });
      expect(await usedGb()).toBe(usedBefore + 100);
      expect(await balances('org_grow')).toEqual([
        { currency: 'IDR', available: '1500000', reserved: '0' },
        { currency: 'USD', available: '9809444', reserved: '190556' },
      ]);
      expect(dry.body.amount).toEqual({ currency: 'USD', amount: '1.90556' });

      expect(await runWorker()).toMatchObject({ succeeded: 1, failed: 0 });
      const done = await t.http.get(`/v1/operations/${opId}`).set(bearer(apiToken('grow', 'rw')));
      expect(done.body).toMatchObject({
        status: 'succeeded',
        steps: [{ name: 'payment_reserved', status: 'succeeded' }, { name: 'resizing', status: 'succeeded' }],
        result: { volume_id: 'vol_growdata1', size_gb: 200, charged: { currency: 'USD', amount: '1.90556' } },
      });
      const volume = await t.http.get('/v1/volumes/vol_growdata1').set(bearer(apiToken('grow', 'rw')));
      expect(volume.body).toMatchObject({ size_gb: 200, status: 'attached', mounted: true, expires_at: '2026-12-21T00:00:00.000Z' });
      expect(await usedGb()).toBe(usedBefore + 100);
      expect(await t.sql(`SELECT size_gb, resize_reserved_gb FROM volumes WHERE id = 'vol_growdata1'`)).toEqual([{ size_gb: 200, resize_reserved_gb: 0 }]);
      expect(await t.sql(`SELECT size_gb FROM provider_disks WHERE volume_id = 'vol_growdata1'`)).toEqual([{ size_gb: 200 }]);
      expect(await ledger('org_grow')).toEqual([
        { kind: 'hold', currency: 'USD', amount: '190556', operation_id: opId },
        { kind: 'capture', currency: 'USD', amount: '190556', operation_id: opId },
      ]);
      const statement = await t.http.get('/v1/wallet/transactions?limit=2').set(bearer(apiToken('grow', 'rw')));
      expect(statement.body.transactions.map((x: Record<string, unknown>) => [x.type, x.amount, x.description])).toEqual([
        ['capture', '1.90556', 'Resize of disk data-1'],
        ['hold', '1.90556', 'Reserved for resize of disk data-1'],
      ]);
      const audit = await t.sql(`SELECT action, target_id, data FROM audit_log WHERE org_id = 'org_grow' AND action = 'volume.resize'`);
      expect(audit).toEqual([
        { action: 'volume.resize', target_id: 'vol_growdata1', data: { operation_id: opId, size_gb_before: 100, size_gb: 200, currency: 'USD', amount: '1.90556' } },
      ]);
    });

    it('charges in the billing currency: IDR rounded up to whole rupiah', async () => {
      // 50 GB × 320 IDR × 2469600 / 2592000 = 15244.44… → 15245.
      const dry = await resize('idrv', { size_gb: 150, dry_run: true });
      expect(dry.body).toEqual({ amount: { currency: 'IDR', amount: '15245' } });
      const keyed = () => t.http.post('/v1/volumes/vol_idrvdata1/resize').set(bearer(apiToken('idrv', 'rw'))).set('Idempotency-Key', 'grow-idr').send({ size_gb: 150 });
      const res = await keyed();
      expect(res.status).toBe(202);
      // The same key again: the stored answer, byte for byte; one operation, one hold.
      const again = await keyed();
      expect(again.status).toBe(202);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.text).toBe(res.text);
      expect(await t.sql(`SELECT count(*)::int AS n FROM operations WHERE org_id = 'org_idrv'`)).toEqual([{ n: 1 }]);
      await runWorker();
      expect(await ledger('org_idrv')).toEqual([
        { kind: 'hold', currency: 'IDR', amount: '15245', operation_id: res.body.operation.id },
        { kind: 'capture', currency: 'IDR', amount: '15245', operation_id: res.body.operation.id },
      ]);
    });

    it.each([
      [{ size_gb: 100 }, 400, 'invalid_request', 'size_gb', /disks only grow/],
      [{ size_gb: 90 }, 400, 'invalid_request', 'size_gb', /disks only grow/],
      [{ size_gb: 205 }, 400, 'invalid_request', 'size_gb', /multiple of 10/],
      [{ size_gb: 4010 }, 400, 'invalid_request', 'size_gb', /at most 4000/],
      [{ size_gb: '200' }, 400, 'invalid_request', 'size_gb', /whole number/],
      [{}, 400, 'invalid_request', 'size_gb', /required/],
      [{ size_gb: 200, dry_run: 'yes' }, 400, 'invalid_request', 'dry_run', /true or false/],
      [{ size_gb: 200, extra: 1 }, 400, 'invalid_request', 'extra', /./],
    ])('refuses %j: %i %s naming %s', async (body, status, code, field, message) => {
      const res = await resize('rfsd', body);
      expect(res.status).toBe(status);
      expect(res.body.error).toMatchObject({ code, details: expect.objectContaining({ field }) });
      expect(res.body.error.message).toMatch(message);
      expect(await t.sql(`SELECT id FROM operations WHERE org_id = 'org_rfsd'`)).toEqual([]);
    });

    it('404 for a volume of another organization or none', async () => {
      const res = await resize('rfsd', { size_gb: 200 }, 'vol_growdata1');
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ code: 'not_found' });
    });

    it('409 invalid_state naming the operation in the way (one operation at a time per disk)', async () => {
      const first = await t.http.post('/v1/volumes/vol_busydata1/detach').set(bearer(apiToken('busy', 'rw')));
      expect(first.status).toBe(202);
      const res = await resize('busy', { size_gb: 200 });
      expect(res.status).toBe(409);
      expect(res.body.error).toMatchObject({ code: 'invalid_state', details: { operation_id: first.body.operation.id } });
      expect(await balances('org_busy')).toEqual([
        { currency: 'IDR', available: '1500000', reserved: '0' },
        { currency: 'USD', available: '10000000', reserved: '0' },
      ]);
      await runWorker();
    });

    it('409 out_of_stock when the region cannot hold the added gigabytes; nothing reserved or held', async () => {
      const [{ used }] = await t.sql<{ used: string }>(`SELECT used_gb::text AS used FROM region_usage WHERE id = 'id-jkt'`);
      await t.sql(`UPDATE regions SET capacity_gb = (SELECT used_gb FROM region_usage WHERE id = 'id-jkt') + 50 WHERE id = 'id-jkt'`);
      try {
        const res = await resize('rfsd', { size_gb: 200 });
        expect(res.status).toBe(409);
        expect(res.body.error).toMatchObject({ code: 'out_of_stock' });
        expect(await usedGb()).toBe(Number(used));
        expect(await ledger('org_rfsd')).toEqual([]);
        expect(await resize('rfsd', { size_gb: 150, dry_run: true })).toMatchObject({ status: 200 });
      } finally {
        await t.sql(`UPDATE regions SET capacity_gb = 20000 WHERE id = 'id-jkt'`);
      }
    });

    it('409 invalid_state for a suspended disk; 402 when the wallet cannot cover it (nothing reserved)', async () => {
      await t.sql(`UPDATE volumes SET status = 'suspended', suspended_at = $1, release_at = $2 WHERE id = 'vol_suspdata1'`, ['2026-11-20T00:00:00Z', '2026-12-20T00:00:00Z']);
      const suspended = await resize('susp', { size_gb: 200 });
      expect(suspended.status).toBe(409);
      expect(suspended.body.error).toMatchObject({ code: 'invalid_state' });
      expect(suspended.body.error.message).toMatch(/suspended/);

      const before = await usedGb();
      const poor = await resize('poor', { size_gb: 200 });
      expect(poor.status).toBe(402);
      expect(poor.body.error).toMatchObject({ code: 'insufficient_balance' });
      expect(await usedGb()).toBe(before);
      expect(await t.sql(`SELECT resize_reserved_gb FROM volumes WHERE id = 'vol_poordata1'`)).toEqual([{ resize_reserved_gb: 0 }]);
    });

    it('a failure at the provider gives back the gigabytes and the money; the disk keeps its size', async () => {
      const before = await usedGb();
      const res = await resize('fail', { size_gb: 300 });
      expect(res.status).toBe(202);
      expect(await usedGb()).toBe(before + 200);
      const spy = jest.spyOn(t.app.get(ProviderGateway), 'resizeDisk').mockRejectedValueOnce(new DomainError('invalid_state', 'The disk cannot grow'));
      try {
        expect(await runWorker()).toMatchObject({ failed: 1 });
      } finally {
        spy.mockRestore();
      }
      const op = await t.http.get(`/v1/operations/${res.body.operation.id}`).set(bearer(apiToken('fail', 'rw')));
      expect(op.body).toMatchObject({ status: 'failed', error: { code: 'invalid_state', message: 'The disk cannot grow' }, result: null });
      expect(await usedGb()).toBe(before);
      expect(await t.sql(`SELECT size_gb, resize_reserved_gb FROM volumes WHERE id = 'vol_faildata1'`)).toEqual([{ size_gb: 100, resize_reserved_gb: 0 }]);
      expect(await ledger('org_fail')).toEqual([
        { kind: 'hold', currency: 'USD', amount: '381112', operation_id: res.body.operation.id },
        { kind: 'release', currency: 'USD', amount: '381112', operation_id: res.body.operation.id },
      ]);
    });

    it('a failed resize whose disk cannot be read keeps its gigabytes (verify names them) until the sweep reads the disk and gives them back', async () => {
      const before = await usedGb();
      const res = await resize('lost', { size_gb: 200 });
      expect(res.status).toBe(202);
      const gateway = t.app.get(ProviderGateway);
      const resizeSpy = jest.spyOn(gateway, 'resizeDisk').mockRejectedValueOnce(new DomainError('invalid_state', 'The disk cannot grow'));
      const readSpy = jest.spyOn(gateway, 'getDisk').mockRejectedValueOnce(new Error('the provider did not answer'));
      try {
        expect(await runWorker()).toMatchObject({ failed: 1 });
      } finally {
        resizeSpy.mockRestore();
        readSpy.mockRestore();
      }
      // Never charged; the capacity stays reserved, since the disk might have grown.
      expect((await ledger('org_lost')).map((l) => l.kind)).toEqual(['hold', 'release']);
      expect(await usedGb()).toBe(before + 100);
      expect(await violationsOf('vol_lostdata1')).toEqual([['resizes.reservations_in_flight', 'vol_lostdata1']]);

      expect(await t.app.get(ReconcileVolumesWithProvider).reconcile('org_lost', 'vol_lostdata1')).toBe(true);
      expect(await usedGb()).toBe(before);
      expect(await t.sql(`SELECT size_gb, resize_reserved_gb FROM volumes WHERE id = 'vol_lostdata1'`)).toEqual([{ size_gb: 100, resize_reserved_gb: 0 }]);
      expect(await violationsOf('vol_lostdata1', 'org_lost')).toEqual([]);
    });

    it('a renewal after a resize charges the new size', async () => {
      const res = await resize('renw', { size_gb: 300 });
      expect(res.status).toBe(202);
      await runWorker();
      const renew = await t.http.post('/v1/volumes/vol_renwdata1/renew').set(bearer(apiToken('renw', 'rw'))).send({ term_months: 1 });
      expect(renew.status).toBe(202);
      await runWorker();
      const op = await t.http.get(`/v1/operations/${renew.body.operation.id}`).set(bearer(apiToken('renw', 'rw')));
      // 300 GB × 0.02 USD × 1 month.
      expect(op.body.result).toMatchObject({ charged: { currency: 'USD', amount: '6.00000' } });
    });
  });

  describe('POST /v1/servers/{id}/resize and /rebuild', () => {
    const rw = bearer(apiToken('srv', 'rw'));
    const ids: Record<string, string> = {};
    const vcpusUsed = async () => Number((await t.sql<{ n: string }>(`SELECT vcpus_used::text AS n FROM region_usage WHERE id = 'id-jkt'`))[0].n);
    const server = async (id: string) => (await t.http.get(`/v1/servers/${id}`).set(rw)).body;
    const action = (id: string, what: string, body: object) => t.http.post(`/v1/servers/${id}/${what}`).set(rw).send(body);

    beforeAll(async () => {
      // Bought at NOW for a month (expires 2026-12-22T10:00Z); "a" stopped, "b" left running.
      for (const name of ['a', 'b']) {
        const res = await t.http.post('/v1/servers').set(rw).send({ name, region: 'id-jkt', plan: 'cx1', image: 'debian-12', term_months: 1, currency: 'USD' });
        expect(res.status).toBe(202);
        ids[name] = res.body.server.id;
      }
      await runWorker();
      expect((await action(ids.a, 'stop', {})).status).toBe(202);
      await runWorker();
      expect(await server(ids.a)).toMatchObject({ status: 'stopped', plan: 'cx1', expires_at: '2026-12-22T10:00:00.000Z' });
      // Ten days and one second later: 1,727,999 s left.
      clock.set(new Date('2026-12-02T10:00:01.000Z'));
    });
    afterAll(() => clock.set(new Date(NOW)));

    it('dry_run and resize of a stopped server to a dearer plan: (9.00 − 4.50) × 1727999 / 2592000, rounded up; vCPUs reserved, then the plan frozen', async () => {
      const dry = await action(ids.a, 'resize', { plan: 'cx2', dry_run: true });
      expect(dry.status).toBe(200);
      // 450000 × 1727999 / 2592000 = 299999.83 → 300000 minor units.
      expect(dry.body).toEqual({ amount: { currency: 'USD', amount: '3.00000' } });
      const before = await vcpusUsed();
      const res = await action(ids.a, 'resize', { plan: 'cx2' });
      expect(res.status).toBe(202);
      const opId = res.body.operation.id;
      expect(res.body.operation).toMatchObject({
        type: 'vm.resize', status: 'pending', vm_id: ids.a,
        steps: [{ name: 'payment_reserved', status: 'succeeded' }, { name: 'resizing', status: 'pending' }],
      });
      expect(await vcpusUsed()).toBe(before + 1);
      expect(await ledger('org_srv')).toContainEqual({ kind: 'hold', currency: 'USD', amount: '300000', operation_id: opId });

      expect(await runWorker()).toMatchObject({ succeeded: 1, failed: 0 });
      const done = await t.http.get(`/v1/operations/${opId}`).set(rw);
      expect(done.body).toMatchObject({
        status: 'succeeded',
        result: { server_id: ids.a, plan: 'cx2', vcpus: 2, memory_gb: 4, disk_gb: 80, charged: { currency: 'USD', amount: '3.00000' } },
      });
      expect(await server(ids.a)).toMatchObject({
        status: 'stopped', plan: 'cx2', vcpus: 2, memory_gb: 4, disk_gb: 80, price_per_month: { USD: '9.00000', IDR: '144000' }, expires_at: '2026-12-22T10:00:00.000Z',
      });
      expect(await vcpusUsed()).toBe(before + 1);
      expect(await t.sql(`SELECT vcpus, memory_gb, disk_gb FROM provider_instances WHERE server_id = $1 AND deleted_at IS NULL`, [ids.a])).toEqual([{ vcpus: 2, memory_gb: 4, disk_gb: 80 }]);
      const captures = (await ledger('org_srv')).filter((l) => l.operation_id === opId);
      expect(captures).toEqual([
        { kind: 'hold', currency: 'USD', amount: '300000', operation_id: opId },
        { kind: 'capture', currency: 'USD', amount: '300000', operation_id: opId },
      ]);
      const audit = await t.sql(`SELECT data FROM audit_log WHERE action = 'server.resize' AND target_id = $1`, [ids.a]);
      expect(audit).toEqual([{ data: { operation_id: opId, plan_before: 'cx1', plan: 'cx2', currency: 'USD', amount: '3.00000' } }]);
    });

    it('refuses: a running server (stop it first), a plan not sold, the same plan, a smaller boot disk, unknown members', async () => {
      const running = await action(ids.b, 'resize', { plan: 'cx2' });
      expect(running.status).toBe(409);
      expect(running.body.error).toMatchObject({ code: 'invalid_state' });
      expect(running.body.error.message).toMatch(/stop the server first/);
      for (const [body, field, message] of [
        [{ plan: 'cx9' }, 'plan', /not sold/],
        [{ plan: 'cx2' }, 'plan', /already/],
        [{ plan: 'cx1' }, 'plan', /do not shrink/],
        [{}, 'plan', /required/],
        [{ plan: 'cx4', dry_run: 1 }, 'dry_run', /true or false/],
      ] as const) {
        const res = await action(ids.a, 'resize', body);
        expect(res.status).toBe(400);
        expect(res.body.error).toMatchObject({ code: 'invalid_request', details: expect.objectContaining({ field }) });
        expect(res.body.error.message).toMatch(message);
      }
      const missing = await action('vm_nothere', 'resize', { plan: 'cx4' });
      expect(missing.status).toBe(404);
      // A seeded server has no term (nothing to prorate): 409 invalid_state, dry run included.
      const seeded = await t.sql<{ status: string }>(`SELECT status FROM servers WHERE id = 'vm_srvweb1'`);
      await t.sql(`UPDATE servers SET status = 'stopped' WHERE id = 'vm_srvweb1'`);
      try {
        for (const body of [{ plan: 'cx2' }, { plan: 'cx2', dry_run: true }]) {
          const res = await action('vm_srvweb1', 'resize', body);
          expect(res.status).toBe(409);
          expect(res.body.error).toMatchObject({ code: 'invalid_state' });
          expect(res.body.error.message).toMatch(/no term/);
        }
      } finally {
        await t.sql(`UPDATE servers SET status = $1 WHERE id = 'vm_srvweb1'`, [seeded[0].status]);
      }
    });

    it('409 out_of_stock when the region has not the vCPUs the plan adds; nothing reserved or held', async () => {
      const [{ used }] = await t.sql<{ used: string }>(`SELECT vcpus_used::text AS used FROM region_usage WHERE id = 'id-jkt'`);
      await t.sql(`UPDATE regions SET vcpu_capacity = (SELECT vcpus_used FROM region_usage WHERE id = 'id-jkt') + 1 WHERE id = 'id-jkt'`);
      try {
        const res = await action(ids.a, 'resize', { plan: 'cx4' });
        expect(res.status).toBe(409);
        expect(res.body.error).toMatchObject({ code: 'out_of_stock' });
        expect(await vcpusUsed()).toBe(Number(used));
        expect(await t.sql(`SELECT count(*)::int AS n FROM operations WHERE vm_id = $1 AND status IN ('pending', 'running')`, [ids.a])).toEqual([{ n: 0 }]);
      } finally {
        await t.sql(`UPDATE regions SET vcpu_capacity = 256 WHERE id = 'id-jkt'`);
      }
    });

    it('a failure at the provider gives back the vCPUs and the money; the server keeps its plan', async () => {
      const before = await vcpusUsed();
      const res = await action(ids.a, 'resize', { plan: 'cx4' });
      expect(res.status).toBe(202);
      expect(await vcpusUsed()).toBe(before + 2);
      const busy = await action(ids.a, 'rebuild', { image: 'debian-12' });
      expect(busy.status).toBe(409);
      expect(busy.body.error).toMatchObject({ code: 'invalid_state', details: { operation_id: res.body.operation.id } });
      const spy = jest.spyOn(t.app.get(ComputeGateway), 'resizeInstance').mockRejectedValueOnce(new DomainError('invalid_state', 'The host has no room'));
      try {
        expect(await runWorker()).toMatchObject({ failed: 1 });
      } finally {
        spy.mockRestore();
      }
      expect(await vcpusUsed()).toBe(before);
      expect(await server(ids.a)).toMatchObject({ plan: 'cx2', vcpus: 2 });
      const rows = (await ledger('org_srv')).filter((l) => l.operation_id === res.body.operation.id);
      expect(rows.map((r) => r.kind)).toEqual(['hold', 'release']);
      expect(await t.sql(`SELECT resize_reserved_vcpus FROM servers WHERE id = $1`, [ids.a])).toEqual([{ resize_reserved_vcpus: 0 }]);
    });

    it('a renewal after the plan change charges the new plan', async () => {
      const res = await action(ids.a, 'renew', { term_months: 1 });
      expect(res.status).toBe(202);
      await runWorker();
      const op = await t.http.get(`/v1/operations/${res.body.operation.id}`).set(rw);
      expect(op.body.result).toMatchObject({ charged: { currency: 'USD', amount: '9.00000' } });
    });

    it('rebuild: reinstalls from the image with the user_data (never kept), boots it running, charges nothing', async () => {
      const walletBefore = await balances('org_srv');
      const res = await action(ids.a, 'rebuild', { image: 'ubuntu-24.04', ssh_key_ids: [], user_data: '#cloud-config\npackages: [nginx]\n' });
      expect(res.status).toBe(202);
      const opId = res.body.operation.id;
      expect(res.body.operation).toMatchObject({ type: 'vm.rebuild', steps: [{ name: 'rebuilding', status: 'pending' }, { name: 'booting', status: 'pending' }] });
      expect(await runWorker()).toMatchObject({ succeeded: 1 });
      const done = await t.http.get(`/v1/operations/${opId}`).set(rw);
      expect(done.body).toMatchObject({ status: 'succeeded', result: { server_id: ids.a, image: 'ubuntu-24.04', status: 'running' } });
      expect(await server(ids.a)).toMatchObject({ status: 'running', image: 'ubuntu-24.04', plan: 'cx2', ssh_key_ids: [] });
      expect(await t.sql(`SELECT params ? 'user_data' AS kept FROM operations WHERE id = $1`, [opId])).toEqual([{ kept: false }]);
      expect(await t.sql(`SELECT image, power, user_data_bytes FROM provider_instances WHERE server_id = $1 AND deleted_at IS NULL`, [ids.a])).toEqual([
        { image: 'ubuntu-24.04', power: 'running', user_data_bytes: 32 },
      ]);
      const audit = await t.sql<{ data: Record<string, unknown> }>(`SELECT data FROM audit_log WHERE action = 'server.rebuild'`);
      expect(audit).toEqual([{ data: { operation_id: opId, image: 'ubuntu-24.04', image_before: 'debian-12', ssh_key_ids: [], user_data_bytes: 32 } }]);
      expect(await balances('org_srv')).toEqual(walletBefore);
      expect(await ledger('org_srv')).not.toContainEqual(expect.objectContaining({ operation_id: opId }));
      const unknown = await action(ids.a, 'rebuild', { image: 'plan9' });
      expect(unknown.status).toBe(404);
    });
  });

  describeOnPostgres('under concurrency (PostgreSQL)', () => {
    it('20 concurrent resizes for capacity that holds 5: exactly 5 accepted, the others 409 out_of_stock', async () => {
      // sg-sin: 900 GB, 20 disks of 20 GB = 400 used; +100 each: five fit.
      expect(await usedGb('sg-sin')).toBe(400);
      const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => resize('many', { size_gb: 120 }, `vol_manyv${i + 1}`)));
      const statuses = responses.map((r) => r.status).sort();
      expect(statuses).toEqual([...Array(5).fill(202), ...Array(15).fill(409)]);
      for (const r of responses.filter((x) => x.status === 409)) expect(r.body.error.code).toBe('out_of_stock');
      expect(await usedGb('sg-sin')).toBe(900);
      await runWorker();
      expect(await usedGb('sg-sin')).toBe(900);
      expect(await t.sql(`SELECT count(*)::int AS n FROM volumes WHERE region_id = 'sg-sin' AND size_gb = 120`)).toEqual([{ n: 5 }]);
    });

    it('a resize racing a renewal of the same disk: one accepted, the other 409 naming it', async () => {
      const [a, b] = await Promise.all([
        resize('race', { size_gb: 200 }, 'vol_racev1'),
        t.http.post('/v1/volumes/vol_racev1/renew').set(bearer(apiToken('race', 'rw'))).send({ term_months: 1 }),
      ]);
      const statuses = [a.status, b.status].sort();
      expect(statuses).toEqual([202, 409]);
      const [winner, loser] = a.status === 202 ? [a, b] : [b, a];
      expect(loser.body.error).toMatchObject({ code: 'invalid_state', details: { operation_id: winner.body.operation.id } });
      await runWorker();
    });
  });

  it('cli verify holds: region capacity and vCPU counters equal what the live resources hold, each resize charged once (none for a failed one)', async () => {
    expect(await violationsOf('')).toEqual([]);
    // A disk whose size differs from its volume's (a resize recorded on one side only) is named.
    await t.sql(`UPDATE provider_disks SET size_gb = 300 WHERE volume_id = 'vol_drydata1'`);
    try {
      expect(await violationsOf('vol_drydata1')).toEqual([['provider.disks_match_volumes', 'vol_drydata1']]);
    } finally {
      await t.sql(`UPDATE provider_disks SET size_gb = 100 WHERE volume_id = 'vol_drydata1'`);
    }
    // So is an instance whose plan differs from its server's (a plan change recorded on one side only).
    const [{ id }] = await t.sql<{ id: string }>(`SELECT id FROM servers WHERE org_id = 'org_srv' AND name = 'a'`);
    await t.sql(`UPDATE provider_instances SET vcpus = 4 WHERE server_id = $1 AND deleted_at IS NULL`, [id]);
    try {
      expect(await violationsOf(id)).toEqual([['provider.instances_match_servers', id]]);
    } finally {
      await t.sql(`UPDATE provider_instances SET vcpus = 2 WHERE server_id = $1 AND deleted_at IS NULL`, [id]);
    }
  });
});
