import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCommand } from '../../src/cli/commands';
import { SetRegionCapacity } from '../../src/modules/options/application/catalog-admin.use-cases';
import { REGION_USED_GB_MISMATCHES } from '../../src/modules/options/infrastructure/region-capacity.sql';
import { VolumeRepository } from '../../src/modules/volumes/application/volumes.port';
import { UnitOfWork } from '../../src/shared/database/unit-of-work';
import { Money } from '../../src/shared/kernel/money/money';
import { tempDir } from '../support/processes';
import { TestApp, startTestApp } from '../support/test-app';
import { driftRegionCounter } from '../support/region-slots';
import { VerifyInvariants } from '../../src/modules/verification/application/verify-invariants.use-case';
import { TypeOrmInvariantChecks } from '../../src/modules/verification/infrastructure/typeorm-invariant-checks';
import { CHECK_VIOLATION, Db, constraintOf, sqlState } from '../../src/shared/database/transaction';
import { BlockStorage } from '../../src/modules/storage-provider/application/block-storage.port';
import { ComputeProvider } from '../../src/modules/servers/application/compute-provider.port';
import { SystemClock } from '../../src/shared/kernel/clock/clock';
import { apiToken, bearer, organization, region } from '../support/fixtures';

/**
 * Region capacity is a counter (lifecycle.md): regions.used_gb = the sum of size_gb of the region's
 * live volumes, kept in the same transaction as every volume write (a trigger on volumes), never
 * above capacity_gb. What writes volumes today: the seed loader; the CLI changes capacity. The
 * volume writes purchases, failures and deletes will make (issue 12) are made here in SQL and
 * through the repository, and the counter must follow each exactly.
 */
const volume = (id: string, region: string, sizeGb: number, extra: Record<string, unknown> = {}) => ({
  id, name: id.replace(/^vol_/, ''), type: 'premium', region, zone: `${region}-a`, size_gb: sizeGb, term_months: 1, currency: 'USD', ...extra,
});

describe('region capacity counter (regions.used_gb)', () => {
  let t: TestApp;
  const rw = bearer(apiToken('cap', 'rw'));
  const counters = async () =>
    Object.fromEntries(
      (await t.sql<{ id: string; capacity_gb: string; used_gb: string }>('SELECT id, capacity_gb::text, used_gb::text FROM region_usage ORDER BY id')).map((r) => [
        r.id,
        { capacity: Number(r.capacity_gb), used: Number(r.used_gb) },
      ]),
    );
  const mismatches = () => t.sql(REGION_USED_GB_MISMATCHES);
  const inStock = async (regionId: string) => {
    const res = await t.http.get(`/v1/volume-options?region=${regionId}`).set(rw);
    expect(res.status).toBe(200);
    return res.body.in_stock as boolean;
  };
  const insertSql = (id: string, regionId: string, sizeGb: number) =>
    t.sql(
      `INSERT INTO volumes (id, org_id, name, status, type, region_id, zone_id, size_gb, term_months, billing_currency,
                            billing_amount, price_usd_minor, price_idr_minor, expires_at)
       VALUES ($1, 'org_cap', $1, 'available', 'premium', $2, $2 || '-a', $3, 1, 'USD', 0, 0, 0, now() + interval '1 month')`,
      [id, regionId, sizeGb],
    );

  beforeAll(async () => {
    t = await startTestApp();
    await t.seed({
      regions: [region('id-jkt', { capacity_gb: 1000 }), region('sg-sin', { name: 'Singapore', capacity_gb: 300 }), region('au-syd', { name: 'Sydney', capacity_gb: 50 })],
      organizations: [
        organization('cap', {
          // the fixture's attached 100 GB volume in id-jkt, and more
          volumes: [
            ...organization('cap').volumes,
            volume('vol_capa', 'id-jkt', 40),
            volume('vol_capb', 'sg-sin', 250),
          ],
        }),
        organization('cap2', { api_keys: [], members: [], volumes: [...organization('cap2').volumes, volume('vol_cap2a', 'sg-sin', 30)] }),
      ],
    });
  });
  afterAll(async () => t?.close());

  it('after the seed: used_gb is each region’s live volumes, the invariant query finds nothing, stock follows it', async () => {
    expect(await counters()).toEqual({
      'au-syd': { capacity: 50, used: 0 },
      'id-jkt': { capacity: 1000, used: 100 + 40 + 100 },
      'sg-sin': { capacity: 300, used: 250 + 30 },
    });
    expect(await mismatches()).toEqual([]);
    expect(await inStock('id-jkt')).toBe(true);
    expect(await inStock('sg-sin')).toBe(true); // 20 GB free, premium min_gb 10
  });

  it('a seed whose volumes overfill a region is refused whole, naming the volume; nothing is written', async () => {
    const before = await counters();
    await expect(
      t.seed({
        regions: [region('br-sao', { name: 'Sao Paulo', capacity_gb: 100 })],
        organizations: [organization('over', { servers: [], volumes: [volume('vol_over1', 'br-sao', 60), volume('vol_over2', 'br-sao', 50)] })],
      }),
    ).rejects.toMatchObject({
      code: 'invalid_request',
      message: 'Seed file: volume over2: region br-sao has not enough capacity left for it (raise its capacity_gb)',
    });
    expect(await counters()).toEqual(before);
    expect(await t.sql("SELECT id FROM organizations WHERE id = 'org_over'")).toEqual([]);

    // The same through the CLI's command runner.
    const dir = tempDir('cds-cap-seed-');
    try {
      const file = join(dir.path, 'over.json');
      writeFileSync(file, JSON.stringify({ regions: [region('br-sao', { name: 'Sao Paulo', capacity_gb: 100 })], organizations: [organization('over', { servers: [], volumes: [volume('vol_over1', 'br-sao', 101)] })] }));
      await expect(runCommand(['seed', file], t.settings)).rejects.toMatchObject({
        code: 'invalid_request',
        message: 'Seed file: volume over1: region br-sao has not enough capacity left for it (raise its capacity_gb)',
      });
    } finally {
      dir.remove();
    }
    expect(await counters()).toEqual(before);
  });

  it('a seed of thousands of volumes (many rows per INSERT, the counter once per statement) counts each exactly, and an overfill in a later statement still names its volume', async () => {
    const many = (prefix: string, regionId: string, count: number) => Array.from({ length: count }, (_, i) => volume(`vol_${prefix}${i + 1}`, regionId, 10));
    // 2,500 volumes of one organization over two regions: three statements of the loader (1,000 each).
    const seeded = await t.seed({
      regions: [region('bulk-a', { name: 'Bulk A', capacity_gb: 20_000 }), region('bulk-b', { name: 'Bulk B', capacity_gb: 10_000 })],
      organizations: [organization('bulk', { api_keys: [], members: [], servers: [], volumes: [...many('ba', 'bulk-a', 1_700), ...many('bb', 'bulk-b', 800)] })],
    });
    expect(seeded.organizations[0].volumes).toHaveLength(2_500);
    expect(seeded.organizations[0].volumes.slice(0, 2)).toEqual(['vol_ba1', 'vol_ba2']);
    const after = await counters();
    expect(after['bulk-a']).toEqual({ capacity: 20_000, used: 17_000 });
    expect(after['bulk-b']).toEqual({ capacity: 10_000, used: 8_000 });
    expect(await mismatches()).toEqual([]);

    // Region bulk-c takes 1,500 volumes of 10 GB: the 1,501st, in the second statement, overfills it.
    await expect(
      t.seed({
        regions: [region('bulk-c', { name: 'Bulk C', capacity_gb: 15_000 })],
        organizations: [organization('bulk2', { api_keys: [], members: [], servers: [], volumes: many('bc', 'bulk-c', 1_600) })],
      }),
    ).rejects.toMatchObject({
      code: 'invalid_request',
      message: 'Seed file: volume bc1501: region bulk-c has not enough capacity left for it (raise its capacity_gb)',
    });
    expect(await t.sql("SELECT id FROM regions WHERE id = 'bulk-c'")).toEqual([]);
    expect(await counters()).toEqual(after);
  });

  it('region:capacity refuses a capacity below used_gb with a clear error, accepts exactly used_gb (then out of stock)', async () => {
    const setCapacity = t.app.get(SetRegionCapacity);
    await expect(setCapacity.execute({ regionId: 'sg-sin', gb: '279' })).rejects.toMatchObject({
      code: 'conflict',
      message: 'Region sg-sin has 280 GB in use by its volumes; its capacity cannot be set below that (asked for 279 GB)',
    });
    await expect(setCapacity.execute({ regionId: 'sg-sin', gb: '0' })).rejects.toMatchObject({
      code: 'conflict',
      message: 'Region sg-sin has 280 GB in use by its volumes; its capacity cannot be set below that (asked for 0 GB)',
    });
    expect((await counters())['sg-sin']).toEqual({ capacity: 300, used: 280 });
    expect(await t.sql("SELECT count(*)::int AS n FROM audit_log WHERE action = 'catalog.region_capacity_set'")).toEqual([{ n: 0 }]);

    expect(await setCapacity.execute({ regionId: 'sg-sin', gb: '280' })).toEqual({ id: 'sg-sin', name: 'Singapore', capacityGb: 280 });
    expect((await counters())['sg-sin']).toEqual({ capacity: 280, used: 280 });
    expect(await inStock('sg-sin')).toBe(false);
    await setCapacity.execute({ regionId: 'sg-sin', gb: '300' });
    expect(await inStock('sg-sin')).toBe(true);
  });

  it('follows every volume write a purchase, a failure or a delete makes, and refuses to overfill', async () => {
    // purchase accepted (status creating) and ready
    await insertSql('vol_p1', 'au-syd', 30);
    expect((await counters())['au-syd']).toEqual({ capacity: 50, used: 30 });
    await t.sql("UPDATE volumes SET status = 'available' WHERE id = 'vol_p1'");
    expect((await counters())['au-syd'].used).toBe(30);
    // a renewal-like write (no size, region or deletion change) leaves it alone
    await t.sql("UPDATE volumes SET expires_at = expires_at + interval '1 month', term_months = 3 WHERE id = 'vol_p1'");
    expect((await counters())['au-syd'].used).toBe(30);
    // more than is free: refused by CHECK (used_gb <= capacity_gb), nothing written
    await expect(insertSql('vol_p2', 'au-syd', 21)).rejects.toMatchObject({ message: expect.stringContaining('regions_used_within_capacity') });
    expect(await t.sql("SELECT id FROM volumes WHERE id = 'vol_p2'")).toEqual([]);
    // exactly what is free
    await insertSql('vol_p2', 'au-syd', 20);
    expect((await counters())['au-syd']).toEqual({ capacity: 50, used: 50 });
    expect(await inStock('au-syd')).toBe(false);
    // a failed purchase / a finished delete: the volume becomes deleted, its capacity comes back
    await t.sql("UPDATE volumes SET status = 'deleted', deleted_at = now() WHERE id = 'vol_p2'");
    expect((await counters())['au-syd'].used).toBe(30);
    // a delete in progress still holds its capacity
    await t.sql("UPDATE volumes SET status = 'deleting' WHERE id = 'vol_p1'");
    expect((await counters())['au-syd'].used).toBe(30);
    // a resize, a move to another region, a row removed
    await t.sql("UPDATE volumes SET size_gb = 40 WHERE id = 'vol_p1'");
    expect((await counters())['au-syd'].used).toBe(40);
    await t.sql("UPDATE volumes SET region_id = 'id-jkt', zone_id = 'id-jkt-a' WHERE id = 'vol_p1'");
    expect(await counters()).toMatchObject({ 'au-syd': { used: 0 }, 'id-jkt': { used: 280 } });
    await t.sql("DELETE FROM volumes WHERE id IN ('vol_p1', 'vol_p2')");
    expect(await counters()).toMatchObject({ 'au-syd': { used: 0 }, 'id-jkt': { used: 240 } });
    expect(await mismatches()).toEqual([]);
  });

  it('two writers racing for the last gigabytes: exactly one gets them, the other out_of_stock', async () => {
    const uow = t.app.get(UnitOfWork);
    const volumes = t.app.get(VolumeRepository);
    const price = { USD: Money.ofMinor('USD', 0n), IDR: Money.ofMinor('IDR', 0n) };
    const create = (id: string) =>
      uow.run(() =>
        volumes.create({
          id, orgId: 'org_cap', name: id, status: 'creating', type: 'premium', regionId: 'au-syd', zoneId: 'au-syd-a', sizeGb: 30,
          serverId: null, mountPath: null, mounted: false, termMonths: 1, billing: Money.ofMinor('USD', 0n), price,
          expiresAt: new Date(Date.now() + 86_400_000), note: null, labels: {}, deleteProtection: false,
        }),
      );
    const results = await Promise.allSettled([create('vol_race1'), create('vol_race2')]);
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(lost[0].reason).toMatchObject({ code: 'out_of_stock', message: 'Region au-syd has less than 30 GB of disk capacity left' });
    expect((await counters())['au-syd']).toEqual({ capacity: 50, used: 30 });
    expect(await t.sql("SELECT count(*)::int AS n FROM volumes WHERE id LIKE 'vol_race%'")).toEqual([{ n: 1 }]);
    expect(await mismatches()).toEqual([]);
  });

  it('the invariant query names a region whose counter was broken by hand', async () => {
    const undo = await driftRegionCounter(t, 'au-syd', 'used_gb', 1);
    expect(await mismatches()).toEqual([{ region_id: 'au-syd', used_gb: '31', live_gb: '30' }]);
    await undo();
    expect(await mismatches()).toEqual([]);
  });

  it('is spread over 16 slots: their shares sum to the capacity, a disk no slot holds alone rebalances them, a deletion gives back to its slot, verify names a slot that drifted', async () => {
    const slots = async () =>
      (await t.sql<{ share: string; used: string }>("SELECT gb_share::text AS share, used_gb::text AS used FROM region_slots WHERE region_id = 'au-syd' ORDER BY slot")).map((r) => ({
        share: Number(r.share),
        used: Number(r.used),
      }));
    const total = (rows: { share: number; used: number }[]) => rows.reduce((n, r) => ({ share: n.share + r.share, used: n.used + r.used }), { share: 0, used: 0 });
    // A change of capacity spreads the room left evenly over the slots (deletions give room back to their own slot).
    await t.sql("UPDATE regions SET capacity_gb = 51 WHERE id = 'au-syd'");
    await t.sql("UPDATE regions SET capacity_gb = 50 WHERE id = 'au-syd'");
    const before = await slots();
    expect(before).toHaveLength(16);
    expect(total(before)).toEqual({ share: 50, used: 30 });
    expect(Math.max(...before.map((r) => r.share - r.used))).toBeLessThan(15);
    // 15 GB fits the region (20 left) but no slot alone: the room is spread again, and the disk counted in one slot.
    await insertSql('vol_spread', 'au-syd', 15);
    const [{ slot }] = await t.sql<{ slot: number }>("SELECT region_slot AS slot FROM volumes WHERE id = 'vol_spread'");
    const after = await slots();
    expect(total(after)).toEqual({ share: 50, used: 45 });
    expect(after[slot].used - before[slot].used).toBe(15);
    expect(after.every((r) => r.used <= r.share)).toBe(true);
    expect(await mismatches()).toEqual([]);
    // 6 GB more does not fit (5 left): refused under the region's constraint, nothing written.
    const refused = await insertSql('vol_spread2', 'au-syd', 6).then(() => undefined, (e: unknown) => e);
    expect({ state: sqlState(refused), constraint: constraintOf(refused) }).toEqual({ state: CHECK_VIOLATION, constraint: 'regions_used_within_capacity' });
    expect(total(await slots())).toEqual({ share: 50, used: 45 });
    // A disk whose row names another slot than the one counting it: verify names both slots.
    const verify = new VerifyInvariants(t.app.get(UnitOfWork), new TypeOrmInvariantChecks(t.app.get(Db), t.app.get(BlockStorage), t.app.get(ComputeProvider)), new SystemClock());
    const findings = async () => (await verify.execute()).violations.filter((v) => v.check === 'regions.used_gb_matches_volumes');
    const other = (slot + 1) % 16;
    await t.sql("UPDATE volumes SET region_slot = $1 WHERE id = 'vol_spread'", [other]);
    const held = (n: number) => String(after[n].used + (n === other ? 15 : n === slot ? -15 : 0));
    expect(await findings()).toEqual(
      [slot, other].sort((a, b) => a - b).map((n) => ({
        check: 'regions.used_gb_matches_volumes',
        subject: 'au-syd',
        message: `slot ${n} counts ${after[n].used} GB but the live volumes counted in it hold ${held(n)} GB`,
        details: { slot: n, used_gb: String(after[n].used), live_gb: held(n) },
      })),
    );
    await t.sql("UPDATE volumes SET region_slot = $1 WHERE id = 'vol_spread'", [slot]);
    expect(await findings()).toEqual([]);
    // Its deletion gives the 15 GB back to its slot.
    await t.sql("UPDATE volumes SET deleted_at = now(), status = 'deleted' WHERE id = 'vol_spread'");
    expect((await slots())[slot].used).toBe(before[slot].used);
    expect(total(await slots())).toEqual({ share: 50, used: 30 });
    expect(await mismatches()).toEqual([]);
  });
});
