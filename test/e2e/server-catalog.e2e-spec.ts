import { runCommand } from '../../src/cli/commands';
import { SetPurchasesPaused, SetRegionVcpus } from '../../src/modules/options/application/catalog-admin.use-cases';
import { VerifyInvariants } from '../../src/modules/verification/application/verify-invariants.use-case';
import { TypeOrmInvariantChecks } from '../../src/modules/verification/infrastructure/typeorm-invariant-checks';
import { BlockStorage } from '../../src/modules/storage-provider/application/block-storage.port';
import { ComputeProvider } from '../../src/modules/servers/application/compute-provider.port';
import { Db } from '../../src/shared/database/transaction';
import { UnitOfWork } from '../../src/shared/database/unit-of-work';
import { SystemClock } from '../../src/shared/kernel/clock/clock';
import { apiToken, bearer, organization, region } from '../support/fixtures';
import { TestApp, startTestApp } from '../support/test-app';

const PLANS = [
  { id: 'cx4', vcpus: 4, memory_gb: 8, disk_gb: 160 },
  { id: 'cx1', vcpus: 1, memory_gb: 2, disk_gb: 40 },
  { id: 'cx2', vcpus: 2, memory_gb: 4, disk_gb: 80 },
  { id: 'cx2m', vcpus: 2, memory_gb: 8, disk_gb: 80 },
];
const IMAGES = [
  { id: 'ubuntu-24.04', name: 'Ubuntu 24.04', type: 'system' },
  { id: 'docker-ce', name: 'Docker CE', type: 'app' },
  { id: 'debian-12', name: 'Debian 12', type: 'system' },
];
const price = (USD: string, IDR: string) => ({ USD, IDR });

/** A server of plan `vcpus` written straight into the table, as a purchase will leave it. */
const insertServer = (t: TestApp, id: string, vcpus: number | null, regionId = 'id-jkt', deleted = false) =>
  t.sql(
    `INSERT INTO servers (id, org_id, name, region_id, zone_id, plan_id, vcpus, memory_gb, disk_gb, term_months, billing_currency, billing_amount,
                          price_usd_minor, price_idr_minor, expires_at, status, deleted_at)
     VALUES ($1, 'org_sc', $2, $3, $4, 'cx1', $5, 2, 40, 1, 'USD', 450000, 450000, 72000, now() + interval '1 month', $6, $7)`,
    [id, id.replace(/_/g, '-'), regionId, `${regionId}-a`, vcpus, deleted ? 'deleted' : 'running', deleted ? new Date() : null],
  );

const ERROR = (res: { headers: Record<string, string> }, code: string, message: string, details: object = {}) => ({
  error: { code, message, request_id: res.headers['x-request-id'], details },
});

/**
 * The server catalog: plans, images and server offers from the seed file, the region vCPU
 * counter kept by the database, GET /v1/server-options, the CLI's region:vcpus and
 * purchases:pause|resume, and verify's counter check.
 */
describe('server catalog', () => {
  let t: TestApp;
  const rw = bearer(apiToken('sc', 'rw'));
  const auditOnly = bearer(apiToken('sc', 'au'));
  /** The CLI's input checks run in process; what reaches the database runs through the same use cases. */
  const cliError = async (argv: string[]) => {
    try {
      await runCommand(argv, t.settings);
      return 'no error';
    } catch (err) {
      const e = err as { code: string; message: string };
      return `${e.code}: ${e.message}`;
    }
  };
  const vcpus = async (id = 'id-jkt') =>
    (await t.sql<{ c: string; u: string }>('SELECT vcpu_capacity::text AS c, vcpus_used::text AS u FROM region_usage WHERE id = $1', [id]))[0];

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t?.close());

  describe('seed', () => {
    it('loads plans, images and per-region server offers, printing the ids it created', async () => {
      const result = await t.seed({
        server_plans: PLANS,
        images: IMAGES,
        regions: [
          region('id-jkt', {
            server_offer: {
              vcpu_capacity: 10,
              terms: [12, 1, 3],
              plans: [
                { plan: 'cx4', price_per_month: price('18.00000', '288000') },
                { plan: 'cx1', price_per_month: price('4.5', '72000') },
                { plan: 'cx2m', price_per_month: price('11.00001', '176000') },
                { plan: 'cx2', price_per_month: price('9.00000', '144000') },
              ],
            },
          }),
          region('sg-sin', { name: 'Singapore' }),
        ],
        organizations: [
          organization('sc', {
            api_keys: [
              { name: 'rw', scopes: ['vm:read', 'vm:write'], token: apiToken('sc', 'rw') },
              { name: 'audit', scopes: ['audit:read'], token: apiToken('sc', 'au') },
            ],
          }),
        ],
      });
      expect(result).toEqual({
        regions: ['id-jkt', 'sg-sin'],
        server_plans: ['cx4', 'cx1', 'cx2', 'cx2m'],
        images: ['ubuntu-24.04', 'docker-ce', 'debian-12'],
        templates: [],
        organizations: [
          { id: 'org_sc', users: [expect.any(Object)], api_keys: [expect.any(Object), expect.any(Object)], servers: ['vm_scweb1'], volumes: ['vol_scdata1'] },
        ],
      });
      expect(await t.sql('SELECT id, vcpus, memory_gb, disk_gb FROM server_plans ORDER BY id')).toEqual(
        [...PLANS].sort((a, b) => (a.id < b.id ? -1 : 1)),
      );
      expect(await t.sql('SELECT region_id, terms FROM server_offers')).toEqual([{ region_id: 'id-jkt', terms: [12, 1, 3] }]);
      expect(
        await t.sql("SELECT plan_id, price_usd_minor::text AS usd, price_idr_minor::text AS idr FROM server_offer_plans WHERE plan_id = 'cx1'"),
      ).toEqual([{ plan_id: 'cx1', usd: '450000', idr: '72000' }]);
      // A seeded server has no plan: it counts no vCPUs. A region without server_offer sells none.
      expect(await vcpus('id-jkt')).toEqual({ c: '10', u: '0' });
      expect(await vcpus('sg-sin')).toEqual({ c: '0', u: '0' });
    });

    it('an older seed file (no server members) loads unchanged and prints empty lists', async () => {
      const result = await t.seed({ regions: [region('old-one')], organizations: [] });
      expect(result).toEqual({ regions: ['old-one'], server_plans: [], images: [], templates: [], organizations: [] });
      expect(await vcpus('old-one')).toEqual({ c: '0', u: '0' });
    });

    it('refuses bad plans, images and offers, naming the member, and writes nothing', async () => {
      const refusal = async (file: object) => {
        try {
          await t.seed(file);
          return 'loaded';
        } catch (err) {
          const e = err as { code: string; message: string; details?: unknown };
          return { code: e.code, message: e.message, details: e.details };
        }
      };
      const offer = (plans: object[]) => ({ regions: [region('xx-new', { server_offer: { vcpu_capacity: 8, terms: [1], plans } })], organizations: [] });
      expect(await refusal(offer([{ plan: 'nope', price_per_month: price('1', '1') }]))).toEqual({
        code: 'invalid_request',
        message: 'Seed file: regions.xx-new.server_offer.plans[0].plan: nope is no server plan (list it in server_plans)',
        details: { field: 'regions.xx-new.server_offer.plans[0].plan' },
      });
      expect(
        await refusal(offer([{ plan: 'cx1', price_per_month: price('1', '1') }, { plan: 'cx1', price_per_month: price('2', '2') }])),
      ).toEqual({
        code: 'invalid_request',
        message: 'Seed file: regions.xx-new.server_offer.plans[1].plan: plan cx1 is offered twice',
        details: { field: 'regions.xx-new.server_offer.plans[1].plan' },
      });
      expect(await refusal({ ...offer([]), regions: [region('xx-new', { server_offer: { vcpu_capacity: 8, terms: [2], plans: [] } })] })).toMatchObject({
        code: 'invalid_request',
        details: { field: 'regions[0].server_offer.terms' },
      });
      expect(await refusal({ server_plans: [{ id: 'cx9', vcpus: 0, memory_gb: 1, disk_gb: 1 }], regions: [], organizations: [] })).toMatchObject({
        code: 'invalid_request',
        details: { field: 'server_plans[0].vcpus' },
      });
      expect(await refusal({ images: [{ id: 'win', name: 'Windows', type: 'desktop' }], regions: [], organizations: [] })).toEqual({
        code: 'invalid_request',
        message: 'Seed file: images[0].type must be system or app',
        details: { field: 'images[0].type' },
      });
      expect(await refusal({ server_plans: [{ id: 'cx1', vcpus: 1, memory_gb: 1, disk_gb: 1 }], regions: [], organizations: [] })).toEqual({
        code: 'conflict',
        message: 'Server plan cx1 exists already',
        details: undefined,
      });
      expect(await refusal({ images: [{ id: 'new-image', name: 'n', type: 'app' }, { id: 'debian-12', name: 'n', type: 'app' }], regions: [], organizations: [] })).toEqual({
        code: 'conflict',
        message: 'Image debian-12 exists already',
        details: undefined,
      });
      expect(await t.sql("SELECT count(*)::int AS n FROM regions WHERE id = 'xx-new'")).toEqual([{ n: 0 }]);
      expect(await t.sql("SELECT count(*)::int AS n FROM images WHERE id = 'new-image'")).toEqual([{ n: 0 }]);
      expect(await t.sql("SELECT count(*)::int AS n FROM server_plans WHERE id = 'cx9'")).toEqual([{ n: 0 }]);
    });
  });

  describe('the region vCPU counter', () => {
    it('counts live servers with a plan, gives vCPUs back on deletion, and refuses to overfill (CHECK)', async () => {
      await insertServer(t, 'vm_sccount1', 4);
      await insertServer(t, 'vm_sccount2', 2);
      await insertServer(t, 'vm_scgone', 2, 'id-jkt', true);
      expect(await vcpus()).toEqual({ c: '10', u: '6' });
      await expect(insertServer(t, 'vm_scover', 5)).rejects.toThrow(/regions_vcpus_within_capacity/);
      await t.sql("UPDATE servers SET deleted_at = now(), status = 'deleted' WHERE id = 'vm_sccount2'");
      expect(await vcpus()).toEqual({ c: '10', u: '4' });
      await t.sql("UPDATE servers SET name = 'renamed' WHERE id = 'vm_sccount1'");
      expect(await vcpus()).toEqual({ c: '10', u: '4' });
      await t.sql("DELETE FROM servers WHERE id IN ('vm_sccount2', 'vm_scgone')");
      expect(await vcpus()).toEqual({ c: '10', u: '4' });
    });
  });

  describe('GET /v1/server-options', () => {
    const expected = (free: number, paused = false) => ({
      region: 'id-jkt',
      in_stock: free >= 1,
      purchases_paused: paused,
      terms: [1, 3, 12],
      zones: [
        { id: 'id-jkt-a', available: true },
        { id: 'id-jkt-b', available: false },
      ],
      plans: [
        { id: 'cx1', vcpus: 1, memory_gb: 2, disk_gb: 40, price_per_month: price('4.50000', '72000'), in_stock: free >= 1 },
        { id: 'cx2', vcpus: 2, memory_gb: 4, disk_gb: 80, price_per_month: price('9.00000', '144000'), in_stock: free >= 2 },
        { id: 'cx2m', vcpus: 2, memory_gb: 8, disk_gb: 80, price_per_month: price('11.00001', '176000'), in_stock: free >= 2 },
        { id: 'cx4', vcpus: 4, memory_gb: 8, disk_gb: 160, price_per_month: price('18.00000', '288000'), in_stock: free >= 4 },
      ],
      images: [
        { id: 'debian-12', name: 'Debian 12', type: 'system' },
        { id: 'docker-ce', name: 'Docker CE', type: 'app' },
        { id: 'ubuntu-24.04', name: 'Ubuntu 24.04', type: 'system' },
      ],
    });

    it("answers the region's plans, prices, terms, zones and images, stock read at every request", async () => {
      const res = await t.http.get('/v1/server-options?region=id-jkt').set(rw);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(expected(6));
      await insertServer(t, 'vm_scfill1', 4);
      expect((await t.http.get('/v1/server-options?region=id-jkt').set(rw)).body).toEqual(expected(2));
      await insertServer(t, 'vm_scfill2', 1);
      expect((await t.http.get('/v1/server-options?region=id-jkt').set(rw)).body).toEqual(expected(1));
      await insertServer(t, 'vm_scfill3', 1);
      expect((await t.http.get('/v1/server-options?region=id-jkt').set(rw)).body).toEqual(expected(0));
      await t.sql("UPDATE servers SET deleted_at = now(), status = 'deleted' WHERE id IN ('vm_scfill1', 'vm_scfill2', 'vm_scfill3')");
      expect((await t.http.get('/v1/server-options?region=id-jkt').set(rw)).body).toEqual(expected(6));
    });

    it('400 without region or for an unknown one (details.valid), 404 for one selling no servers, 401 and 403 as every GET', async () => {
      const missing = await t.http.get('/v1/server-options').set(rw);
      expect(missing.status).toBe(400);
      expect(missing.body).toEqual(ERROR(missing, 'invalid_request', 'region is required', { field: 'region' }));
      const twice = await t.http.get('/v1/server-options?region=id-jkt&region=sg-sin').set(rw);
      expect(twice.status).toBe(400);
      expect(twice.body).toEqual(ERROR(twice, 'invalid_request', 'region must be a single string', { field: 'region' }));
      const unknown = await t.http.get('/v1/server-options?region=xx-nowhere').set(rw);
      expect(unknown.status).toBe(400);
      const regions = (await t.sql<{ id: string }>('SELECT id FROM regions ORDER BY id COLLATE "C"')).map((r) => r.id);
      expect(regions.length).toBeGreaterThan(1);
      expect(unknown.body).toEqual(ERROR(unknown, 'invalid_request', `region xx-nowhere is no region; valid: ${regions.join(', ')}`, { field: 'region', valid: regions }));
      const none = await t.http.get('/v1/server-options?region=sg-sin').set(rw);
      expect(none.status).toBe(404);
      expect(none.body).toEqual(ERROR(none, 'not_found', 'Region sg-sin sells no servers'));
      const anonymous = await t.http.get('/v1/server-options?region=id-jkt');
      expect(anonymous.status).toBe(401);
      expect(anonymous.body.error.code).toBe('unauthorized');
      const noScope = await t.http.get('/v1/server-options?region=id-jkt').set(auditOnly);
      expect(noScope.status).toBe(403);
      expect(noScope.body).toEqual(ERROR(noScope, 'forbidden', 'The API key lacks the scope vm:read'));
    });
  });

  describe('CLI', () => {
    const setVcpus = (regionId: string, v: string) => t.app.get(SetRegionVcpus).execute({ regionId, vcpus: v });
    const useCaseError = async (work: Promise<unknown>) => {
      try {
        await work;
        return 'no error';
      } catch (err) {
        const e = err as { code: string; message: string };
        return `${e.code}: ${e.message}`;
      }
    };
    const pause = (regionId: string | null, paused: boolean) => t.app.get(SetPurchasesPaused).execute({ regionId, paused });

    it('region:vcpus sets the capacity, never below what live servers use, audited', async () => {
      expect(await setVcpus('id-jkt', '4')).toEqual({ id: 'id-jkt', name: 'Jakarta', vcpuCapacity: 4, vcpusUsed: 4 });
      expect((await t.http.get('/v1/server-options?region=id-jkt').set(rw)).body.in_stock).toBe(false);
      expect(await useCaseError(setVcpus('id-jkt', '3'))).toBe(
        'conflict: Region id-jkt has 4 vCPUs in use by its servers; its vCPU capacity cannot be set below that (asked for 3)',
      );
      expect(await setVcpus('id-jkt', '10')).toEqual({ id: 'id-jkt', name: 'Jakarta', vcpuCapacity: 10, vcpusUsed: 4 });
      expect(await useCaseError(setVcpus('xx-nowhere', '3'))).toBe('not_found: Region xx-nowhere not found');
      for (const v of ['-1', '1.5', 'many', '99999999999999999']) {
        expect(await useCaseError(setVcpus('id-jkt', v))).toBe('invalid_request: vcpus must be a whole number of vCPUs, 0 or more');
      }
      expect(await cliError(['region:vcpus', '--region', 'id-jkt'])).toBe('invalid_request: --vcpus is required');
      expect(await vcpus()).toEqual({ c: '10', u: '4' });
      expect(await t.sql("SELECT org_id, actor_type, actor_id, action, target_type, target_id, data FROM audit_log WHERE action = 'catalog.region_vcpus_set' ORDER BY seq")).toEqual([
        { org_id: null, actor_type: 'system', actor_id: null, action: 'catalog.region_vcpus_set', target_type: 'region', target_id: 'id-jkt', data: { vcpu_capacity: 4 } },
        { org_id: null, actor_type: 'system', actor_id: null, action: 'catalog.region_vcpus_set', target_type: 'region', target_id: 'id-jkt', data: { vcpu_capacity: 10 } },
      ]);
    });

    it('purchases:pause and purchases:resume switch the global and per-region switches, shown by server-options, audited', async () => {
      const paused = async () => (await t.http.get('/v1/server-options?region=id-jkt').set(rw)).body.purchases_paused;
      const all = (global: boolean, jkt: boolean) => ({ global, regions: { 'id-jkt': jkt, 'old-one': false, 'sg-sin': false } });
      expect(await pause('id-jkt', true)).toEqual(all(false, true));
      expect(await paused()).toBe(true);
      expect(await pause(null, true)).toEqual(all(true, true));
      expect(await pause('id-jkt', false)).toEqual(all(true, false));
      expect(await paused()).toBe(true);
      expect(await pause(null, false)).toEqual(all(false, false));
      expect(await paused()).toBe(false);
      expect(await useCaseError(pause('xx-nowhere', true))).toBe('not_found: Region xx-nowhere not found');
      expect(await cliError(['purchases:pause', '--region', ''])).toBe('invalid_request: --region must name a region');
      expect(await cliError(['purchases:pause', 'now'])).toBe("invalid_request: too many arguments for 'purchases:pause'. Expected 0 arguments but got 1.; npm run cli -- --help lists the commands and their options");
      expect(await t.sql("SELECT action, target_type, target_id, data FROM audit_log WHERE action LIKE 'catalog.purchases_%' ORDER BY seq")).toEqual([
        { action: 'catalog.purchases_paused', target_type: 'region', target_id: 'id-jkt', data: { region: 'id-jkt' } },
        { action: 'catalog.purchases_paused', target_type: 'global', target_id: 'global', data: { region: null } },
        { action: 'catalog.purchases_resumed', target_type: 'region', target_id: 'id-jkt', data: { region: 'id-jkt' } },
        { action: 'catalog.purchases_resumed', target_type: 'global', target_id: 'global', data: { region: null } },
      ]);
    });
  });

  it('verify: the vCPU counter equals the live servers\' vCPUs, and a broken counter is named', async () => {
    const verify = new VerifyInvariants(t.app.get(UnitOfWork), new TypeOrmInvariantChecks(t.app.get(Db), t.app.get(BlockStorage), t.app.get(ComputeProvider)), new SystemClock());
    const check = (r: Awaited<ReturnType<VerifyInvariants['execute']>>) => r.violations.filter((v) => v.check === 'regions.vcpus_used_matches_servers');
    expect(check(await verify.execute())).toEqual([]);
    await t.sql('ALTER TABLE servers DISABLE TRIGGER servers_count_update');
    try {
      await t.sql("UPDATE servers SET deleted_at = now(), status = 'deleted' WHERE id = 'vm_sccount1'");
    } finally {
      await t.sql('ALTER TABLE servers ENABLE TRIGGER servers_count_update');
    }
    expect(check(await verify.execute())).toEqual([
      {
        check: 'regions.vcpus_used_matches_servers',
        subject: 'id-jkt',
        message: 'vcpus_used is 4 but its live servers hold 0 vCPUs',
        details: { vcpus_used: '4', live_vcpus: '0' },
      },
    ]);
  });
});
