import { CATALOG_CACHE_TTL_MS, GetVolumeOptions } from '../../src/modules/options/application/get-volume-options.use-case';
import { ListRegions } from '../../src/modules/options/application/list-regions.use-case';
import { VolumeOffer } from '../../src/modules/options/domain/catalog';
import { InMemoryCatalogQueries } from '../../src/modules/options/testing/in-memory-catalog-queries';
import { FixedClock } from '../../src/shared/kernel/clock/clock';
import { DomainError } from '../../src/shared/kernel/errors/domain-error';
import { Money } from '../../src/shared/kernel/money/money';

const offer = (type: 'premium' | 'ssd', overrides: Partial<VolumeOffer> = {}): VolumeOffer => ({
  regionId: 'id-jkt',
  type,
  minGb: 10,
  maxGb: 100,
  stepGb: 10,
  terms: [12, 1, 3],
  perServerLimit: 2,
  price: { USD: Money.ofMinor('USD', 2000n), IDR: Money.ofMinor('IDR', 320n) },
  ...overrides,
});

function setup() {
  const queries = new InMemoryCatalogQueries();
  queries.regionsById.set('id-jkt', {
    id: 'id-jkt',
    name: 'Jakarta',
    capacityGb: 100,
    zones: [
      { id: 'id-jkt-b', available: false },
      { id: 'id-jkt-a', available: true },
    ],
    offers: [offer('premium')],
  });
  const clock = new FixedClock(new Date('2026-11-21T10:00:00.000Z'));
  return { queries, clock, useCase: new GetVolumeOptions(queries, clock) };
}

const codeOf = async (p: Promise<unknown>): Promise<string> => {
  try {
    await p;
    return 'resolved';
  } catch (err) {
    return err instanceof DomainError ? `${err.code}: ${err.message}` : String(err);
  }
};

describe('GetVolumeOptions', () => {
  it('groups the eligible servers by zone, by name then id, zones by id, terms ascending', async () => {
    const { queries, useCase } = setup();
    queries.servers.push(
      { id: 'vm_2', orgId: 'org_a', name: 'web', regionId: 'id-jkt', zoneId: 'id-jkt-a', deleted: false },
      { id: 'vm_1', orgId: 'org_a', name: 'web', regionId: 'id-jkt', zoneId: 'id-jkt-a', deleted: false },
      { id: 'vm_0', orgId: 'org_a', name: 'Zed', regionId: 'id-jkt', zoneId: 'id-jkt-a', deleted: false },
      { id: 'vm_3', orgId: 'org_a', name: 'db', regionId: 'id-jkt', zoneId: 'id-jkt-b', deleted: false },
      { id: 'vm_4', orgId: 'org_a', name: 'gone', regionId: 'id-jkt', zoneId: 'id-jkt-a', deleted: true },
      { id: 'vm_5', orgId: 'org_b', name: 'other', regionId: 'id-jkt', zoneId: 'id-jkt-a', deleted: false },
      { id: 'vm_6', orgId: 'org_a', name: 'full', regionId: 'id-jkt', zoneId: 'id-jkt-a', deleted: false },
    );
    queries.volumes.push(
      { regionId: 'id-jkt', sizeGb: 10, serverId: 'vm_6', deleted: false },
      { regionId: 'id-jkt', sizeGb: 10, serverId: 'vm_6', deleted: false },
    );
    const options = await useCase.execute('org_a', { region: 'id-jkt', type: 'premium' });
    expect(options.terms).toEqual([1, 3, 12]);
    expect(options.inStock).toBe(true);
    expect(options.zones).toEqual([
      {
        id: 'id-jkt-a',
        available: true,
        servers: [
          { id: 'vm_0', name: 'Zed' }, // code-unit order: upper case first, the same on every engine
          { id: 'vm_1', name: 'web' },
          { id: 'vm_2', name: 'web' },
        ],
      },
      { id: 'id-jkt-b', available: false, servers: [{ id: 'vm_3', name: 'db' }] },
    ]);
  });

  it('is in stock while min_gb still fits in the free capacity shared by every live volume', async () => {
    const { queries, useCase } = setup();
    const inStock = async () => (await useCase.execute('org_a', { region: 'id-jkt', type: 'premium' })).inStock;
    queries.volumes.push({ regionId: 'id-jkt', sizeGb: 90, serverId: null, deleted: false });
    queries.volumes.push({ regionId: 'id-jkt', sizeGb: 500, serverId: null, deleted: true });
    queries.volumes.push({ regionId: 'other', sizeGb: 500, serverId: null, deleted: false });
    expect(await inStock()).toBe(true); // 10 free = min_gb
    queries.volumes.push({ regionId: 'id-jkt', sizeGb: 1, serverId: null, deleted: false });
    expect(await inStock()).toBe(false);
    queries.volumes.push({ regionId: 'id-jkt', sizeGb: 50, serverId: null, deleted: false });
    expect(await inStock()).toBe(false); // over-committed: negative free capacity
  });

  it('serves the offer and zones from memory for the TTL, but reads stock and servers at every call', async () => {
    const { queries, clock, useCase } = setup();
    const run = () => useCase.execute('org_a', { region: 'id-jkt', type: 'premium' });
    await run();
    await run();
    expect(queries.calls).toEqual({ offerSnapshot: 1, regionLoad: 2, regions: 0 });

    queries.regionsById.get('id-jkt')!.zones[0].available = true;
    clock.advance(CATALOG_CACHE_TTL_MS - 1);
    expect((await run()).zones[1].available).toBe(false);
    expect(queries.calls.offerSnapshot).toBe(1);

    clock.advance(1);
    expect((await run()).zones[1].available).toBe(true);
    expect(queries.calls).toEqual({ offerSnapshot: 2, regionLoad: 4, regions: 0 });
  });

  it('shares one catalog query between concurrent misses', async () => {
    const { queries, useCase } = setup();
    await Promise.all([1, 2, 3].map(() => useCase.execute('org_a', { region: 'id-jkt', type: 'premium' })));
    expect(queries.calls).toEqual({ offerSnapshot: 1, regionLoad: 3, regions: 0 });
  });

  it('answers invalid_request for an unknown region and not_found for a type the region does not sell, without caching the unknown region', async () => {
    const { queries, useCase } = setup();
    expect(await codeOf(useCase.execute('org_a', { region: 'xx', type: 'premium' }))).toBe('invalid_request: region xx is no region; valid: id-jkt');
    expect(await codeOf(useCase.execute('org_a', { region: 'xx', type: 'premium' }))).toBe('invalid_request: region xx is no region; valid: id-jkt');
    expect(queries.calls.offerSnapshot).toBe(2);
    expect(await codeOf(useCase.execute('org_a', { region: 'id-jkt', type: 'ssd' }))).toBe('not_found: Region id-jkt sells no ssd disks');
    expect(queries.calls.regionLoad).toBe(0);

    // a region created later shows at once
    queries.regionsById.set('xx', { id: 'xx', name: 'X', capacityGb: 10, zones: [], offers: [offer('premium', { regionId: 'xx' })] });
    expect((await useCase.execute('org_a', { region: 'xx', type: 'premium' })).region).toBe('xx');
  });

  it('does not cache a failed catalog query', async () => {
    const { queries, useCase } = setup();
    const original = queries.offerSnapshot.bind(queries);
    queries.offerSnapshot = () => Promise.reject(new Error('connection lost'));
    expect(await codeOf(useCase.execute('org_a', { region: 'id-jkt', type: 'premium' }))).toBe('Error: connection lost');
    queries.offerSnapshot = original;
    expect((await useCase.execute('org_a', { region: 'id-jkt', type: 'premium' })).region).toBe('id-jkt');
  });
});

describe('ListRegions', () => {
  it('orders regions and zones by id, and lists the disk types each region sells', async () => {
    const queries = new InMemoryCatalogQueries();
    queries.regionsById.set('sg', { id: 'sg', name: 'S', capacityGb: 1, zones: [{ id: 'sg-b', available: true }, { id: 'sg-a', available: false }], offers: [offer('ssd', { regionId: 'sg' }), offer('premium', { regionId: 'sg' })] });
    queries.regionsById.set('id', { id: 'id', name: 'I', capacityGb: 1, zones: [], offers: [] });
    expect(await new ListRegions(queries).execute()).toEqual([
      { id: 'id', name: 'I', volumeTypes: [], zones: [], snapshotPrice: null },
      { id: 'sg', name: 'S', volumeTypes: ['premium', 'ssd'], zones: [{ id: 'sg-a', available: false }, { id: 'sg-b', available: true }], snapshotPrice: null },
    ]);
  });
});
