import fc from 'fast-check';
import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { ExpireTerms } from '../../src/modules/terms/application/expire-terms.use-case';
import { FixedClock } from '../../src/shared/kernel/clock/clock';
import { adminSetup } from '../support/admin';
import { adminApi, answer as call } from '../support/admin-client';
import type { Client } from '../support/admin-client/generated/client';
import { errorBody } from '../support/assertions';
import { apiToken, bearer, organization } from '../support/fixtures';
import { IMAGES, SERVER_PLANS, serverRegion } from '../support/servers';
import { TestApp, startTestApp } from '../support/test-app';

/**
 * The admin API's catalog, capacity, purchases and terms routes (admin.md "Catalog, capacity and
 * purchases", "Terms and operations") on one app with both listeners and a fixed clock: regions,
 * zones and prices by operators (the operator CLI's use cases), what a new quote, purchase and
 * renewal pay afterwards, the purchase switch, and the retention extension of a suspended
 * resource, released at the new time.
 */
const NOW = '2026-11-22T10:00:00.000Z';
const at = (iso: string, seconds: number) => new Date(new Date(iso).getTime() + seconds * 1000).toISOString();
const EXPIRY = at(NOW, 3600);

describe('admin API: catalog, capacity, prices, purchases and retention', () => {
  let t: TestApp;
  let a: Awaited<ReturnType<typeof adminSetup>>;
  let advance: AdvanceOperations;
  /** The generated admin client (every admin call of this file goes through it). */
  let client: Client;
  const clock = new FixedClock(new Date(NOW));
  const rw = bearer(apiToken('acat', 'rw'));
  const key = () => a.key();
  const as = (role: string) => a.as(role);
  const why = { 'X-Justification': 'OPS-7 retention' };
  let boughtServer: string;
  /** Bought at the new cx1 price, 1 month from NOW: suspended in the last test. */
  let laterServer: string;

  beforeAll(async () => {
    t = await startTestApp({ adminPort: 1, volumeRetentionS: 120, serverRetentionS: 60 }, clock);
    advance = t.app.get(AdvanceOperations);
    const base = organization('acat');
    await t.seed({
      server_plans: SERVER_PLANS,
      images: IMAGES,
      regions: [serverRegion('id-jkt', 256, { ipv6_prefix: '2001:db8:10::/48' }), serverRegion('sg-sin', 16, { name: 'Singapore', ipv6_prefix: '2001:db8:11::/48' })],
      organizations: [
        {
          ...base,
          wallet: { USD: '1000.00000', IDR: '15000000' },
          api_keys: [...base.api_keys, { name: 'audit', scopes: ['audit:read'], token: apiToken('acat', 'audit') }],
          volumes: [
            { ...base.volumes[0], server: undefined, mount_path: undefined },
            { ...base.volumes[0], id: 'vol_acatexp1', name: 'expiring-1', server: undefined, mount_path: undefined, size_gb: 50, expires_at: EXPIRY },
          ],
        },
      ],
    });
    a = await adminSetup(t, 'cat.test');
    client = a.client;
    // A server bought at cx1's seeded price (4.50000 USD a month), before any price change.
    const bought = await t.http.post('/v1/servers').set(rw).send({ name: 'app-1', region: 'id-jkt', plan: 'cx1', image: 'debian-12', term_months: 1, currency: 'USD' });
    expect(bought.status).toBe(202);
    boughtServer = bought.body.server.id;
    expect(await advance.runUntilIdle()).toMatchObject({ succeeded: 1 });
  });
  afterAll(async () => t?.close());

  const usd = async () => ((await t.http.get('/v1/wallet').set(rw)).body.balances as { currency: string; available: string }[]).find((b) => b.currency === 'USD')!.available;
  const region = async () => ((await call(adminApi.listAdminRegions({ client, headers: { ...as('support') } }))).body.regions as { id: string }[]).find((r) => r.id === 'id-jkt');
  const staffAudit = (requestId: string) => a.staffAudit(requestId);

  describe('regions', () => {
    it('every role reads the regions: capacity and use, switches, zones and prices', async () => {
      for (const role of ['support', 'billing', 'operator', 'superadmin']) {
        const res = await call(adminApi.listAdminRegions({ client, headers: { ...as(role) } }));
        expect(res.status).toBe(200);
        expect(res.body).toEqual({
          regions: [
            {
              id: 'id-jkt',
              name: 'Jakarta',
              disk_capacity_gb: 20000,
              disk_used_gb: 150,
              vcpu_capacity: 256,
              vcpus_used: 1,
              purchases_paused: false,
              zones: [{ id: 'id-jkt-a', available: true }, { id: 'id-jkt-b', available: false }],
              prices: {
                volumes: { premium: { USD: '0.02000', IDR: '320' }, ssd: { USD: '0.01250', IDR: '200' } },
                plans: { cx1: { USD: '4.50000', IDR: '72000' }, cx2: { USD: '9.00000', IDR: '144000' }, cx4: { USD: '18.00000', IDR: '288000' } },
                reserved_ipv4: null,
              },
              // The seeded server's /64 and the bought one's.
              ipv6_prefix: '2001:db8:10::/48',
              ipv6_subnets_used: 2,
              reserved_ipv4_pool: { addresses: 0, held: 0 },
            },
            {
              id: 'sg-sin',
              name: 'Singapore',
              disk_capacity_gb: 20000,
              disk_used_gb: 0,
              vcpu_capacity: 16,
              vcpus_used: 0,
              purchases_paused: false,
              zones: [{ id: 'sg-sin-a', available: true }, { id: 'sg-sin-b', available: false }],
              prices: {
                volumes: { premium: { USD: '0.02000', IDR: '320' }, ssd: { USD: '0.01250', IDR: '200' } },
                plans: { cx1: { USD: '4.50000', IDR: '72000' }, cx2: { USD: '9.00000', IDR: '144000' }, cx4: { USD: '18.00000', IDR: '288000' } },
                reserved_ipv4: null,
              },
              ipv6_prefix: '2001:db8:11::/48',
              ipv6_subnets_used: 0,
              reserved_ipv4_pool: { addresses: 0, held: 0 },
            },
          ],
          global_purchases_paused: false,
        });
      }
      expect((await call(adminApi.listAdminRegions({ client, headers: { ...rw } }))).status).toBe(401);
    });

    it('PATCH is for operators (403 otherwise), needs an Idempotency-Key, and refuses bad members naming them', async () => {
      for (const role of ['support', 'billing']) {
        const res = await call(adminApi.updateRegion({ client, path: { id: 'id-jkt' }, headers: { ...as(role), ...key() }, body: { vcpu_capacity: 10 } }));
        expect(res.status).toBe(403);
        expect(res.body).toEqual(errorBody(res, 'forbidden', `The ${role} role may not call this route`));
      }
      const noKey = await call(adminApi.updateRegion({ client, path: { id: 'id-jkt' }, headers: { ...as('operator') }, body: { vcpu_capacity: 10 } }));
      expect(noKey.status).toBe(400);
      expect(noKey.body.error.details).toEqual({ field: 'Idempotency-Key' });
      for (const [body, field, message] of [
        [{}, 'disk_capacity_gb', 'Give at least one of disk_capacity_gb, vcpu_capacity, purchases_paused, ipv6_prefix, reserved_ipv4_pool_add'],
        [{ disk_capacity_gb: -1 }, 'disk_capacity_gb', 'disk_capacity_gb must be a whole number of GB, 0 or more'],
        [{ disk_capacity_gb: '500' }, 'disk_capacity_gb', 'disk_capacity_gb must be a whole number of GB, 0 or more'],
        [{ vcpu_capacity: 1.5 }, 'vcpu_capacity', 'vcpu_capacity must be a whole number of vCPUs, 0 or more'],
        [{ vcpu_capacity: 100, purchases_paused: 'yes' }, 'purchases_paused', 'purchases_paused must be true or false'],
      ] as const) {
        const res = await call(adminApi.updateRegion({ client, path: { id: 'id-jkt' }, headers: { ...as('operator'), ...key() }, body: body as never }));
        expect(res.status).toBe(400);
        expect(res.body).toEqual(errorBody(res, 'invalid_request', message, { field }));
      }
      const unknown = await call(adminApi.updateRegion({ client, path: { id: 'id-jkt' }, headers: { ...as('operator'), ...key() }, body: { capacity: 5 } as never }));
      expect(unknown.status).toBe(400);
      expect(unknown.body.error.details).toEqual({ field: 'capacity' });
      const nowhere = await call(adminApi.updateRegion({ client, path: { id: 'xx-nowhere' }, headers: { ...as('operator'), ...key() }, body: { vcpu_capacity: 5 } }));
      expect(nowhere.status).toBe(404);
      expect(nowhere.body).toEqual(errorBody(nowhere, 'not_found', 'Region xx-nowhere not found'));
      expect((await region())).toMatchObject({ disk_capacity_gb: 20000, vcpu_capacity: 256, purchases_paused: false });
    });

    it('a capacity below what is in use is 409 naming it, and nothing of the request is changed', async () => {
      const disk = await call(adminApi.updateRegion({ client, path: { id: 'id-jkt' }, headers: { ...as('operator'), ...key() }, body: { purchases_paused: true, disk_capacity_gb: 149 } }));
      expect(disk.status).toBe(409);
      expect(disk.body).toEqual(errorBody(disk, 'conflict', 'Region id-jkt has 150 GB in use by its volumes; its capacity cannot be set below that (asked for 149 GB)', { field: 'disk_capacity_gb', in_use: 150 }));
      const vcpus = await call(adminApi.updateRegion({ client, path: { id: 'id-jkt' }, headers: { ...as('operator'), ...key() }, body: { disk_capacity_gb: 9000, vcpu_capacity: 0 } }));
      expect(vcpus.status).toBe(409);
      expect(vcpus.body.error.details).toEqual({ field: 'vcpu_capacity', in_use: 1 });
      expect(await region()).toMatchObject({ disk_capacity_gb: 20000, vcpu_capacity: 256, purchases_paused: false });
    });

    it('sets capacities: the answer and GET show them, server-options sells from them, the staff audit keeps before and after', async () => {
      const res = await call(adminApi.updateRegion({ client, path: { id: 'id-jkt' }, headers: { ...as('operator'), ...key() }, body: { disk_capacity_gb: 150, vcpu_capacity: 2 } }));
      expect(res.status).toBe(200);
      expect(res.body.region).toEqual({ ...(await region()), disk_capacity_gb: 150, vcpu_capacity: 2 });
      const options = await t.http.get('/v1/server-options?region=id-jkt').set(rw);
      expect(options.body.in_stock).toBe(true);
      expect(options.body.plans.map((p: { id: string; in_stock: boolean }) => [p.id, p.in_stock])).toEqual([['cx1', true], ['cx2', false], ['cx4', false]]);
      expect((await t.http.get('/v1/volume-options?region=id-jkt').set(rw)).body.in_stock).toBe(false);
      expect(await staffAudit(res.headers['x-request-id'])).toMatchObject({
        method: 'PATCH', route: '/admin/v1/regions/:id', role: 'operator', organization_id: null, target_type: 'region', target_id: 'id-jkt', status: 200,
        changes: { before: { disk_capacity_gb: 20000, vcpu_capacity: 256, purchases_paused: false }, after: { disk_capacity_gb: 150, vcpu_capacity: 2, purchases_paused: false } },
      });
      expect(
        await t.sql("SELECT actor_type, actor_id, action, data FROM audit_log WHERE action IN ('catalog.region_capacity_set', 'catalog.region_vcpus_set') ORDER BY seq"),
      ).toEqual([
        { actor_type: 'staff', actor_id: 'operator', action: 'catalog.region_capacity_set', data: { capacity_gb: 150 } },
        { actor_type: 'staff', actor_id: 'operator', action: 'catalog.region_vcpus_set', data: { vcpu_capacity: 2 } },
      ]);
      const back = await call(adminApi.updateRegion({ client, path: { id: 'id-jkt' }, headers: { ...as('superadmin'), ...key() }, body: { disk_capacity_gb: 20000, vcpu_capacity: 256 } }));
      expect(back.status).toBe(200);
    });

    it('zones: operators open and close one, GET /v1/regions shows it at once; 400, 403 and 404 change nothing', async () => {
      const res = await call(adminApi.updateZone({ client, path: { id: 'id-jkt-b' }, headers: { ...as('operator'), ...key() }, body: { available: true } }));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ zone: { id: 'id-jkt-b', region: 'id-jkt', available: true } });
      expect((await t.http.get('/v1/regions').set(rw)).body.regions[0].zones).toEqual([{ id: 'id-jkt-a', available: true }, { id: 'id-jkt-b', available: true }]);
      expect(await staffAudit(res.headers['x-request-id'])).toMatchObject({ target_type: 'zone', target_id: 'id-jkt-b', changes: { before: { available: false }, after: { available: true } } });
      const bad = await call(adminApi.updateZone({ client, path: { id: 'id-jkt-b' }, headers: { ...as('operator'), ...key() }, body: { available: 'no' } as never }));
      expect(bad.body).toEqual(errorBody(bad, 'invalid_request', 'available must be true or false', { field: 'available' }));
      expect((await call(adminApi.updateZone({ client, path: { id: 'id-jkt-b' }, headers: { ...as('support'), ...key() }, body: { available: false } }))).status).toBe(403);
      const none = await call(adminApi.updateZone({ client, path: { id: 'xx-a' }, headers: { ...as('operator'), ...key() }, body: { available: false } }));
      expect(none.body).toEqual(errorBody(none, 'not_found', 'Zone xx-a not found'));
      expect((await region())).toMatchObject({ zones: [{ id: 'id-jkt-a', available: true }, { id: 'id-jkt-b', available: true }] });
      expect((await call(adminApi.updateZone({ client, path: { id: 'id-jkt-b' }, headers: { ...as('operator'), ...key() }, body: { available: false } }))).status).toBe(200);
    });
  });

  describe('prices', () => {
    it('are set by operators only, and bad prices are 400 naming the member, nothing changed', async () => {
      expect((await call(adminApi.setRegionPrices({ client, path: { id: 'id-jkt' }, headers: { ...as('billing'), ...key() }, body: { plans: { cx1: { USD: '1', IDR: '1' } } } }))).status).toBe(403);
      for (const [body, field] of [
        [{}, 'volumes'],
        [{ volumes: [] }, 'volumes'],
        [{ volumes: { gold: { USD: '1', IDR: '1' } } }, 'volumes.gold'],
        [{ volumes: { premium: { USD: '0.03' } } }, 'volumes.premium.IDR'],
        [{ volumes: { premium: { USD: '0.000001', IDR: '1' } } }, 'volumes.premium.USD'],
        [{ volumes: { premium: { USD: '0', IDR: '1' } } }, 'volumes.premium.USD'],
        [{ volumes: { premium: { USD: '1', IDR: '1.5' } } }, 'volumes.premium.IDR'],
        [{ volumes: { premium: { USD: '1', IDR: '1', EUR: '1' } } }, 'volumes.premium.EUR'],
        [{ plans: { cx1: 5 } }, 'plans.cx1'],
        [{ plans: { cx1: { USD: '5', IDR: '80000' }, cx9: { USD: '5', IDR: '80000' } } }, 'plans.cx9'],
      ] as const) {
        const res = await call(adminApi.setRegionPrices({ client, path: { id: 'id-jkt' }, headers: { ...as('operator'), ...key() }, body: body as never }));
        expect([res.status, res.body.error?.code, res.body.error?.details]).toEqual([400, 'invalid_request', { field }]);
      }
      expect((await region())).toMatchObject({ prices: { volumes: { premium: { USD: '0.02000', IDR: '320' } }, plans: { cx1: { USD: '4.50000', IDR: '72000' } } } });
      const nowhere = await call(adminApi.setRegionPrices({ client, path: { id: 'xx-nowhere' }, headers: { ...as('operator'), ...key() }, body: { plans: { cx1: { USD: '5', IDR: '80000' } } } }));
      expect(nowhere.status).toBe(404);
    });

    it('apply to new quotes and purchases; a bought volume and server renew at their frozen prices; the audit keeps old and new', async () => {
      const res = await call(adminApi.setRegionPrices({ client, path: { id: 'id-jkt' }, headers: { ...as('operator'), ...key() }, body: { volumes: { premium: { USD: '0.04', IDR: '640' } }, plans: { cx1: { USD: '5.25', IDR: '80000' } } } }));
      expect(res.status).toBe(200);
      expect(res.body.region.prices).toEqual({
        volumes: { premium: { USD: '0.04000', IDR: '640' }, ssd: { USD: '0.01250', IDR: '200' } },
        plans: { cx1: { USD: '5.25000', IDR: '80000' }, cx2: { USD: '9.00000', IDR: '144000' }, cx4: { USD: '18.00000', IDR: '288000' } },
        reserved_ipv4: null,
      });
      const changes = {
        before: { volumes: { premium: { USD: '0.02000', IDR: '320' } }, plans: { cx1: { USD: '4.50000', IDR: '72000' } } },
        after: { volumes: { premium: { USD: '0.04000', IDR: '640' } }, plans: { cx1: { USD: '5.25000', IDR: '80000' } } },
      };
      expect(await staffAudit(res.headers['x-request-id'])).toMatchObject({ route: '/admin/v1/regions/:id/prices', target_id: 'id-jkt', changes });
      expect(await t.sql("SELECT actor_type, actor_id, target_id, data FROM audit_log WHERE action = 'catalog.prices_set'")).toEqual([
        { actor_type: 'staff', actor_id: 'operator', target_id: 'id-jkt', data: changes },
      ]);

      // New quotes and purchases pay the new prices.
      const quote = await t.http.post('/v1/quotes').set(rw).send({ region: 'id-jkt', type: 'premium', size_gb: 100, term_months: 1, currency: 'USD' });
      expect(quote.status).toBe(201);
      expect(quote.body).toMatchObject({ price_per_gb_month: { USD: '0.04000', IDR: '640' }, currency: 'USD', amount: '4.00000' });
      const serverQuote = await t.http.post('/v1/quotes').set(rw).send({ region: 'id-jkt', plan: 'cx1', term_months: 1, currency: 'USD' });
      expect(serverQuote.body).toMatchObject({ currency: 'USD', amount: '5.25000' });
      const volume = await t.http.post('/v1/volumes').set(rw).send({ name: 'new-1', region: 'id-jkt', zone: 'id-jkt-a', type: 'premium', size_gb: 10, term_months: 1, currency: 'USD' });
      expect(volume.status).toBe(202);
      expect(volume.body.volume).toMatchObject({ price_per_gb_month: { USD: '0.04000', IDR: '640' }, billing: { currency: 'USD', amount: '0.40000' } });
      const server = await t.http.post('/v1/servers').set(rw).send({ name: 'app-2', region: 'id-jkt', plan: 'cx1', image: 'debian-12', term_months: 1, currency: 'USD' });
      expect(server.status).toBe(202);
      expect(server.body.server).toMatchObject({ price_per_month: { USD: '5.25000', IDR: '80000' }, billing: { currency: 'USD', amount: '5.25000' } });
      laterServer = server.body.server.id;
      await advance.runUntilIdle();

      // What was bought before keeps its price: the 100 GB disk renews at 0.02 (2.00000), the server at 4.50000.
      const before = await usd();
      expect((await t.http.post('/v1/volumes/vol_acatdata1/renew').set(rw).send({ term_months: 1 })).status).toBe(202);
      expect((await t.http.post(`/v1/servers/${boughtServer}/renew`).set(rw).send({ term_months: 1 })).status).toBe(202);
      await advance.runUntilIdle();
      expect(Number(before) - Number(await usd())).toBeCloseTo(6.5, 5);
      expect((await t.http.get('/v1/volumes/vol_acatdata1').set(rw)).body.price_per_gb_month).toEqual({ USD: '0.02000', IDR: '320' });
      expect((await t.http.get(`/v1/servers/${boughtServer}`).set(rw)).body.price_per_month).toEqual({ USD: '4.50000', IDR: '72000' });
    });
  });

  describe('networking: IPv6 prefix, reserved IPv4 pool and price (what the seed file sets)', () => {
    const patch = (id: string, body: object, role = 'operator') => call(adminApi.updateRegion({ client, path: { id }, headers: { ...as(role), ...key() }, body: body as never }));
    const prices = (id: string, body: object) => call(adminApi.setRegionPrices({ client, path: { id }, headers: { ...as('operator'), ...key() }, body: body as never }));
    const regionOf = async (id: string) =>
      ((await call(adminApi.listAdminRegions({ client, headers: { ...as('support') } }))).body.regions as { id: string; ipv6_prefix: string; reserved_ipv4_pool: object }[]).find((r) => r.id === id)!;

    it("sets a region's IPv6 prefix: bad forms 400, another region's or one its live servers hold 409; servers bought afterwards get its /64s; audited", async () => {
      const form = 'ipv6_prefix must be an IPv6 /48 given as its network address, e.g. 2001:db8:10::/48';
      for (const value of [5, '2001:db8:20::/64', '2001:db8:20::1/48', '10.0.0.0/8', 'x']) {
        const res = await patch('sg-sin', { ipv6_prefix: value });
        expect({ value, status: res.status, body: res.body }).toEqual({ value, status: 400, body: errorBody(res, 'invalid_request', form, { field: 'ipv6_prefix' }) });
      }
      expect((await patch('sg-sin', { ipv6_prefix: '2001:db8:20::/48' }, 'support')).status).toBe(403);
      const taken = await patch('sg-sin', { ipv6_prefix: '2001:db8:10::/48' });
      expect({ status: taken.status, body: taken.body }).toEqual({
        status: 409,
        body: errorBody(taken, 'conflict', "ipv6_prefix 2001:db8:10::/48 is region id-jkt's; give a /48 no other region has", { field: 'ipv6_prefix', existing_id: 'id-jkt' }),
      });
      const [{ live }] = await t.sql<{ live: number }>("SELECT count(*)::int AS live FROM servers WHERE region_id = 'id-jkt' AND deleted_at IS NULL");
      // With another member: nothing of the request is changed.
      const inUse = await patch('id-jkt', { vcpu_capacity: 100, ipv6_prefix: '2001:db8:30::/48' });
      expect({ status: inUse.status, body: inUse.body }).toEqual({
        status: 409,
        body: errorBody(inUse, 'conflict', `Region id-jkt has ${live} live server(s) with addresses of 2001:db8:10::/48; its prefix cannot change while they live`, { field: 'ipv6_prefix', in_use: live }),
      });
      expect(await regionOf('id-jkt')).toMatchObject({ vcpu_capacity: 256, ipv6_prefix: '2001:db8:10::/48' });

      // Given in any spelling of the same /48: stored canonical.
      const res = await patch('sg-sin', { ipv6_prefix: '2001:DB8:20:0::/48' });
      expect(res.status).toBe(200);
      expect(res.body.region).toEqual({ ...(await regionOf('sg-sin')), ipv6_prefix: '2001:db8:20::/48', ipv6_subnets_used: 0 });
      expect(await staffAudit(res.headers['x-request-id'])).toMatchObject({
        route: '/admin/v1/regions/:id', target_type: 'region', target_id: 'sg-sin',
        changes: { before: { ipv6_prefix: '2001:db8:11::/48' }, after: { ipv6_prefix: '2001:db8:20::/48' } },
      });
      expect(await t.sql("SELECT actor_type, actor_id, target_id, data FROM audit_log WHERE action = 'catalog.region_ipv6_prefix_set'")).toEqual([
        { actor_type: 'staff', actor_id: 'operator', target_id: 'sg-sin', data: { ipv6_prefix: { old: '2001:db8:11::/48', new: '2001:db8:20::/48' } } },
      ]);
      // A server bought there now gets the first /64 of the new prefix; while it lives the prefix stays.
      const bought = await t.http.post('/v1/servers').set(rw).send({ name: 'sin-1', region: 'sg-sin', plan: 'cx1', image: 'debian-12', term_months: 1, currency: 'USD' });
      expect(bought.status).toBe(202);
      expect(bought.body.server.ipv6).toBe('2001:db8:20:1::1');
      await advance.runUntilIdle();
      expect((await patch('sg-sin', { ipv6_prefix: '2001:db8:21::/48' })).body.error.details).toEqual({ field: 'ipv6_prefix', in_use: 1 });
      expect((await t.http.delete(`/v1/servers/${bought.body.server.id}`).set(rw)).status).toBe(202);
      await advance.runUntilIdle();
      expect(await regionOf('sg-sin')).toMatchObject({ ipv6_prefix: '2001:db8:20::/48', ipv6_subnets_used: 1 });
    });

    it("adds CIDR blocks to a region's reserved IPv4 pool and sets its price: bad blocks and prices 400 naming them, an address a pool holds 409; the region then sells them; audited", async () => {
      const list = 'reserved_ipv4_pool_add must be a list of 1 to 100 IPv4 blocks in CIDR form, such as ["203.0.113.0/27"]';
      const cidr = (i: number) => `reserved_ipv4_pool_add[${i}] must be an IPv4 block in CIDR form, such as 203.0.113.0/27`;
      for (const [value, field, message] of [
        [[], 'reserved_ipv4_pool_add', list],
        ['203.0.113.0/28', 'reserved_ipv4_pool_add', list],
        [['x'], 'reserved_ipv4_pool_add[0]', cidr(0)],
        [['203.0.113.0/28', 7], 'reserved_ipv4_pool_add[1]', cidr(1)],
        [['2001:db8::/64'], 'reserved_ipv4_pool_add[0]', cidr(0)],
        [['203.0.113.1/28'], 'reserved_ipv4_pool_add[0]', 'reserved_ipv4_pool_add[0] must name a block at its first address (203.0.113.1/28 has host bits set)'],
        [['203.0.113.0/28', '203.0.113.8/29'], 'reserved_ipv4_pool_add[1]', 'reserved_ipv4_pool_add[1] overlaps another block of the pool'],
        [['10.0.0.0/8'], 'reserved_ipv4_pool_add[0]', 'reserved_ipv4_pool_add may hold at most 65536 addresses'],
      ] as const) {
        const res = await patch('id-jkt', { reserved_ipv4_pool_add: value });
        expect({ value, status: res.status, body: res.body }).toEqual({ value, status: 400, body: errorBody(res, 'invalid_request', message, { field }) });
      }
      // No price before the region has a pool; a price is a {USD, IDR} pair of decimal strings, more than 0.
      const early = await prices('id-jkt', { reserved_ipv4: { USD: '1.5', IDR: '24000' } });
      expect({ status: early.status, body: early.body }).toEqual({
        status: 400,
        body: errorBody(early, 'invalid_request', 'Region id-jkt has no reserved IPv4 pool; add addresses (PATCH /admin/v1/regions/id-jkt reserved_ipv4_pool_add) before its price', { field: 'reserved_ipv4' }),
      });
      for (const [body, field] of [
        [{ reserved_ipv4: { USD: '0', IDR: '1' } }, 'reserved_ipv4.USD'],
        [{ reserved_ipv4: { USD: '1.000001', IDR: '1' } }, 'reserved_ipv4.USD'],
        [{ reserved_ipv4: { USD: '1' } }, 'reserved_ipv4.IDR'],
        [{ reserved_ipv4: '1.00' }, 'reserved_ipv4'],
      ] as const) {
        const res = await prices('id-jkt', body);
        expect([res.status, res.body.error?.code, res.body.error?.details]).toEqual([400, 'invalid_request', { field }]);
      }
      expect(await regionOf('id-jkt')).toMatchObject({ prices: { reserved_ipv4: null }, reserved_ipv4_pool: { addresses: 0, held: 0 } });

      const added = await patch('id-jkt', { reserved_ipv4_pool_add: ['203.0.113.0/29', '198.51.100.7/32'] });
      expect(added.status).toBe(200);
      expect(added.body.region).toEqual({ ...(await regionOf('id-jkt')), reserved_ipv4_pool: { addresses: 9, held: 0 } });
      expect(await staffAudit(added.headers['x-request-id'])).toMatchObject({
        target_id: 'id-jkt', changes: { before: { reserved_ipv4_pool_addresses: 0 }, after: { reserved_ipv4_pool_addresses: 9 } },
      });
      expect(await t.sql("SELECT actor_type, actor_id, target_id, data FROM audit_log WHERE action = 'catalog.reserved_ipv4_pool_added'")).toEqual([
        { actor_type: 'staff', actor_id: 'operator', target_id: 'id-jkt', data: { blocks: ['203.0.113.0/29', '198.51.100.7/32'], addresses: 9 } },
      ]);
      // An address a pool holds already (here id-jkt's): 409 naming its block; nothing of the request is added.
      const overlap = await patch('sg-sin', { reserved_ipv4_pool_add: ['198.51.100.0/30', '203.0.113.4/30'] });
      expect({ status: overlap.status, body: overlap.body }).toEqual({
        status: 409,
        body: errorBody(overlap, 'conflict', "reserved_ipv4_pool_add[1]: 203.0.113.4 is in region id-jkt's pool already", { field: 'reserved_ipv4_pool_add[1]', existing_id: 'id-jkt' }),
      });
      expect(await t.sql("SELECT region_id, count(*)::int AS n FROM reserved_ip_pool GROUP BY region_id")).toEqual([{ region_id: 'id-jkt', n: 9 }]);

      // The price: the region sells reserved addresses at it.
      const priced = await prices('id-jkt', { reserved_ipv4: { USD: '1.5', IDR: '24000' } });
      expect(priced.status).toBe(200);
      expect(priced.body.region.prices.reserved_ipv4).toEqual({ USD: '1.50000', IDR: '24000' });
      const changes = { before: { volumes: {}, plans: {}, reserved_ipv4: null }, after: { volumes: {}, plans: {}, reserved_ipv4: { USD: '1.50000', IDR: '24000' } } };
      expect(await staffAudit(priced.headers['x-request-id'])).toMatchObject({ route: '/admin/v1/regions/:id/prices', target_id: 'id-jkt', changes });
      expect(await t.sql("SELECT data FROM audit_log WHERE action = 'catalog.prices_set' AND data->'after' ? 'reserved_ipv4'")).toEqual([{ data: changes }]);
      const regions = (await t.http.get('/v1/regions').set(rw)).body.regions as { id: string; reserved_ipv4_price_per_month: object | null }[];
      expect(regions.map((r) => [r.id, r.reserved_ipv4_price_per_month])).toEqual([['id-jkt', { USD: '1.50000', IDR: '24000' }], ['sg-sin', null]]);
      const reserved = await t.http.post('/v1/reserved-ips').set(rw).send({ region: 'id-jkt', term_months: 1, currency: 'USD' });
      expect(reserved.status).toBe(202);
      expect(reserved.body.reserved_ip).toMatchObject({ ip: '198.51.100.7', region: 'id-jkt', billing: { currency: 'USD', amount: '1.50000' } });
      await advance.runUntilIdle();
      expect(await regionOf('id-jkt')).toMatchObject({ reserved_ipv4_pool: { addresses: 9, held: 1 } });
      // Released again (its term would run into the retention tests' clock).
      expect((await t.http.delete(`/v1/reserved-ips/${reserved.body.reserved_ip.id}`).set(rw)).status).toBe(202);
      await advance.runUntilIdle();
    });
  });

  describe('purchases switch', () => {
    it('paused in a region: a server purchase there is 503 purchases_paused with nothing reserved; renewals and disks go on; resumed: accepted', async () => {
      const paused = await call(adminApi.updateRegion({ client, path: { id: 'id-jkt' }, headers: { ...as('operator'), ...key() }, body: { purchases_paused: true } }));
      expect(paused.status).toBe(200);
      expect(paused.body.region.purchases_paused).toBe(true);
      expect((await t.http.get('/v1/server-options?region=id-jkt').set(rw)).body.purchases_paused).toBe(true);
      const available = await usd();
      const refused = await t.http.post('/v1/servers').set(rw).send({ name: 'app-3', region: 'id-jkt', plan: 'cx1', image: 'debian-12', term_months: 1, currency: 'USD' });
      expect(refused.status).toBe(503);
      expect(refused.body).toEqual(errorBody(refused, 'purchases_paused', 'Server purchases are paused in id-jkt at the moment; nothing was reserved. Retry later'));
      expect(await usd()).toBe(available);
      const renewal = await t.http.post(`/v1/servers/${boughtServer}/renew`).set(rw).send({ term_months: 1 });
      expect(renewal.status).toBe(202);
      const disk = await t.http.post('/v1/volumes').set(rw).send({ name: 'new-2', region: 'id-jkt', zone: 'id-jkt-a', type: 'ssd', size_gb: 20, term_months: 1, currency: 'USD' });
      expect([disk.status, disk.body.error]).toEqual([202, undefined]);
      await advance.runUntilIdle();
      expect(await t.sql("SELECT actor_type, actor_id, target_id FROM audit_log WHERE action = 'catalog.purchases_paused'")).toEqual([{ actor_type: 'staff', actor_id: 'operator', target_id: 'id-jkt' }]);

      expect((await call(adminApi.updateRegion({ client, path: { id: 'id-jkt' }, headers: { ...as('operator'), ...key() }, body: { purchases_paused: false } }))).body.region.purchases_paused).toBe(false);
      const accepted = await t.http.post('/v1/servers').set(rw).send({ name: 'app-3', region: 'id-jkt', plan: 'cx1', image: 'debian-12', term_months: 1, currency: 'USD' });
      expect(accepted.status).toBe(202);
      await advance.runUntilIdle();
    });
  });

  describe('retention extension', () => {
    const extend = (kind: 'servers' | 'volumes', id: string, body: object, role = 'operator') =>
      call((kind === 'servers' ? adminApi.extendServerRetention : adminApi.extendVolumeRetention)({ client, path: { id }, headers: { ...as(role), ...why, ...key() }, body: body as never }));

    it('refuses what is not suspended (409), and needs the operator role, a justification and an Idempotency-Key', async () => {
      const live = await extend('volumes', 'vol_acatdata1', { until: at(NOW, 86_400), reason: 'ticket' });
      expect(live.status).toBe(409);
      expect(live.body).toEqual(errorBody(live, 'invalid_state', 'Volume vol_acatdata1 is available, not suspended: it has no release to move', { status: 'available' }));
      expect((await extend('servers', boughtServer, { until: at(NOW, 86_400), reason: 'ticket' }, 'billing')).status).toBe(403);
      const noWhy = await call(adminApi.extendVolumeRetention({ client, path: { id: 'vol_acatexp1' }, headers: { ...as('operator'), ...key() } as never, body: { until: at(NOW, 86_400), reason: 'x' } }));
      expect(noWhy.status).toBe(400);
      expect(noWhy.body.error.details).toEqual({ field: 'X-Justification' });
      const noKey = await call(adminApi.extendVolumeRetention({ client, path: { id: 'vol_acatexp1' }, headers: { ...as('operator'), ...why }, body: { until: at(NOW, 86_400), reason: 'x' } }));
      expect(noKey.body.error.details).toEqual({ field: 'Idempotency-Key' });
      const missing = await extend('volumes', 'vol_nope', { until: at(NOW, 86_400), reason: 'x' });
      expect(missing.body).toEqual(errorBody(missing, 'not_found', 'Volume vol_nope not found'));
    });

    it('moves a suspended volume\'s release_at later (at most 90 days after suspension); the customer sees it; the sweep releases at the new time', async () => {
      const expire = t.app.get(ExpireTerms);
      clock.set(new Date(EXPIRY));
      expect(await expire.execute()).toBeGreaterThanOrEqual(1);
      await advance.runUntilIdle();
      const suspended = (await t.http.get('/v1/volumes/vol_acatexp1').set(rw)).body;
      expect(suspended).toMatchObject({ status: 'suspended', suspended_at: EXPIRY, release_at: at(EXPIRY, 120) });

      for (const [body, field, message] of [
        [{ until: 'tomorrow', reason: 'x' }, 'until', 'until must be an ISO 8601 timestamp such as 2026-12-01T00:00:00Z'],
        [{ until: at(EXPIRY, 60), reason: 'x' }, 'until', `until must be later than the current release_at (${at(EXPIRY, 120)})`],
        [{ until: at(EXPIRY, 90 * 86_400 + 1), reason: 'x' }, 'until', `until must be at most 90 days after suspended_at (${EXPIRY}): ${at(EXPIRY, 90 * 86_400)} at the latest`],
        [{ until: at(EXPIRY, 3600) }, 'reason', 'reason must be 1 to 500 characters'],
      ] as const) {
        const res = await extend('volumes', 'vol_acatexp1', body);
        expect(res.body).toEqual(errorBody(res, 'invalid_request', message, { field }));
      }

      const until = at(EXPIRY, 3600);
      const res = await extend('volumes', 'vol_acatexp1', { until, reason: 'Paying by bank transfer' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ volume: { ...suspended, release_at: until } });
      expect((await t.http.get('/v1/volumes/vol_acatexp1').set(rw)).body.release_at).toBe(until);
      expect(await staffAudit(res.headers['x-request-id'])).toMatchObject({
        organization_id: 'org_acat', target_type: 'volume', target_id: 'vol_acatexp1', justification: why['X-Justification'],
        changes: { before: { release_at: at(EXPIRY, 120) }, after: { release_at: until } },
      });
      const log = await t.http.get('/v1/audit-log?action=volume.retention_extend').set(bearer(apiToken('acat', 'audit')));
      expect(log.status).toBe(200);
      expect(log.body.entries).toEqual([
        {
          id: expect.stringMatching(/^aud_/), created_at: expect.any(String), action: 'volume.retention_extend', actor: { type: 'staff', role: 'operator' },
          target: { type: 'volume', id: 'vol_acatexp1' }, ip: null, request_id: res.headers['x-request-id'], client_request_id: null,
          data: { release_at_before: at(EXPIRY, 120), release_at: until, reason: 'Paying by bank transfer', justification: why['X-Justification'] },
        },
      ]);
      expect(JSON.stringify(log.body)).not.toContain('operator@cat.test');

      // Past the old release_at: still suspended. At the new one: released.
      clock.set(new Date(at(EXPIRY, 600)));
      await expire.execute();
      expect((await t.http.get('/v1/volumes/vol_acatexp1').set(rw)).body.status).toBe('suspended');
      clock.set(new Date(until));
      await expire.execute();
      await advance.runUntilIdle();
      expect((await t.http.get('/v1/volumes/vol_acatexp1').set(rw)).body).toMatchObject({ status: 'deleted', deleted_reason: 'expired' });
      const late = await extend('volumes', 'vol_acatexp1', { until: at(EXPIRY, 7200), reason: 'too late' });
      expect(late.status).toBe(409);
    });

    it("moves a suspended server's release_at the same way; the sweep leaves it suspended past the old time", async () => {
      const expire = t.app.get(ExpireTerms);
      const { expires_at: expiresAt } = (await t.http.get(`/v1/servers/${laterServer}`).set(rw)).body;
      clock.set(new Date(expiresAt));
      await expire.execute();
      await advance.runUntilIdle();
      const suspended = (await t.http.get(`/v1/servers/${laterServer}`).set(rw)).body;
      expect(suspended).toMatchObject({ status: 'suspended', suspended_at: expiresAt, release_at: at(expiresAt, 60) });
      const tooLate = await extend('servers', laterServer, { until: at(expiresAt, 91 * 86_400), reason: 'x' });
      expect(tooLate.body.error.details).toEqual({ field: 'until' });
      const until = at(expiresAt, 30 * 86_400);
      const res = await extend('servers', laterServer, { until, reason: 'Card expired, customer is paying' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ server: { ...suspended, release_at: until } });
      const replay = await call(adminApi.extendServerRetention({ client, path: { id: laterServer }, headers: { ...as('operator'), ...why, ...a.lastKey() }, body: { until, reason: 'Card expired, customer is paying' } }));
      expect([replay.status, replay.headers['idempotent-replayed'], replay.body]).toEqual([200, 'true', res.body]);
      expect(await t.sql("SELECT actor_type, actor_id, org_id, target_id FROM audit_log WHERE action = 'server.retention_extend'")).toEqual([
        { actor_type: 'staff', actor_id: 'operator', org_id: 'org_acat', target_id: laterServer },
      ]);
      clock.set(new Date(at(expiresAt, 3600)));
      await expire.execute();
      expect((await t.http.get(`/v1/servers/${laterServer}`).set(rw)).body).toMatchObject({ status: 'suspended', release_at: until });
    });
  });

  describe('generated bodies', () => {
    it('the write routes answer every body with a success or the error envelope naming a field, never a 5xx, and the region stays sound', async () => {
      const member = (names: string[]) => fc.oneof(fc.constantFrom(...names), fc.constantFrom('__proto__', 'constructor', 'USD', 'IDR', ''), fc.string({ maxLength: 8 }));
      const value = fc.oneof(fc.jsonValue({ maxDepth: 1 }), fc.integer({ min: -5, max: 30000 }), fc.constantFrom('1.5', '0.00001', '80000', 'true', true, null));
      const price = fc.dictionary(member(['USD', 'IDR']), value, { maxKeys: 3 });
      const routes = [
        { path: '/admin/v1/regions/id-jkt', method: 'patch', body: fc.dictionary(member(['disk_capacity_gb', 'vcpu_capacity', 'purchases_paused']), value, { maxKeys: 3 }) },
        { path: '/admin/v1/zones/id-jkt-b', method: 'patch', body: fc.dictionary(member(['available']), value, { maxKeys: 2 }) },
        { path: '/admin/v1/regions/id-jkt/prices', method: 'patch', body: fc.dictionary(member(['volumes', 'plans']), fc.oneof(value, fc.dictionary(member(['premium', 'ssd', 'cx1', 'cx9']), fc.oneof(price, value), { maxKeys: 2 })), { maxKeys: 2 }) },
        { path: '/admin/v1/volumes/vol_acatdata1/extend-retention', method: 'post', body: fc.dictionary(member(['until', 'reason']), fc.oneof(value, fc.date({ noInvalidDate: true }).map((d) => d.toISOString())), { maxKeys: 2 }) },
      ] as const;
      const bodies = fc.sample(fc.tuple(fc.nat(routes.length - 1), fc.nat()).chain(([i]) => routes[i].body.map((body) => ({ route: routes[i], body }))), { numRuns: 120, seed: 20261128 });
      const statuses = new Map<number, number>();
      for (const { route, body } of bodies) {
        const res = await a.admin[route.method](route.path).set(as('operator')).set(why).set(key()).send(body);
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        const where = `${route.method.toUpperCase()} ${route.path} ${JSON.stringify(body)}: ${res.status} ${JSON.stringify(res.body)}`;
        if (res.status === 200) continue;
        expect([where, res.status < 500, res.body.error?.request_id]).toEqual([where, true, res.headers['x-request-id']]);
        if (res.status === 400) expect([where, typeof res.body.error.details.field]).toEqual([where, 'string']);
      }
      // Both kinds of answer were reached: some bodies were accepted, most refused.
      expect([...statuses.keys()].sort()).toEqual(expect.arrayContaining([200, 400]));
      // The networking members (IPv6 prefix, reserved IPv4 pool and price) likewise: never a 5xx, a 400 names its member.
      const networking = [
        {
          path: '/admin/v1/regions/sg-sin',
          body: fc.record(
            {
              ipv6_prefix: fc.oneof(value, fc.constantFrom('2001:db8:40::/48', '2001:DB8:41::/48', '2001:db8:10::/48', '2001:db8::/64', '2001:db8:40::1/48')),
              reserved_ipv4_pool_add: fc.oneof(value, fc.array(fc.oneof(value, fc.constantFrom('192.0.2.0/30', '192.0.2.8/29', '203.0.113.0/30', '192.0.2.1/30', '::/0', '10.0.0.0/8')), { maxLength: 3 })),
            },
            { requiredKeys: [] },
          ),
        },
        { path: '/admin/v1/regions/sg-sin/prices', body: fc.record({ reserved_ipv4: fc.oneof(price, value, fc.constant({ USD: '2.5', IDR: '40000' })) }, { requiredKeys: [] }) },
      ] as const;
      const more = fc.sample(fc.nat(networking.length - 1).chain((i) => networking[i].body.map((body) => ({ path: networking[i].path, body }))), { numRuns: 60, seed: 20261129 });
      for (const { path, body } of more) {
        const res = await a.admin.patch(path).set(as('operator')).set(key()).send(body);
        const where = `PATCH ${path} ${JSON.stringify(body)}: ${res.status} ${JSON.stringify(res.body)}`;
        if (res.status === 200) continue;
        expect([where, res.status < 500, res.body.error?.request_id]).toEqual([where, true, res.headers['x-request-id']]);
        if (res.status === 400) expect([where, typeof res.body.error.details.field]).toEqual([where, 'string']);
      }
      expect(await region()).toMatchObject({ id: 'id-jkt', disk_used_gb: expect.any(Number) });
      const [row] = await t.sql<{ ok: boolean }>("SELECT used_gb <= capacity_gb AND vcpus_used <= vcpu_capacity AS ok FROM region_usage WHERE id = 'id-jkt'");
      expect(row.ok).toBe(true);
    });
  });
});
