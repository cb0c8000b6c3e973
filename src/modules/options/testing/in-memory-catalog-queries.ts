import { CatalogQueries } from '../application/catalog-queries.port';
import { VolumeOffer, VolumeType, Zone } from '../domain/catalog';
import { OfferSnapshot, RegionLoad, RegionSummary } from '../domain/volume-options';

interface MemoryRegion {
  id: string;
  name: string;
  capacityGb: number;
  zones: Zone[];
  offers: VolumeOffer[];
}

interface MemoryServer {
  id: string;
  orgId: string;
  name: string;
  regionId: string;
  zoneId: string;
  deleted: boolean;
}

interface MemoryVolume {
  regionId: string;
  sizeGb: number;
  serverId: string | null;
  deleted: boolean;
}

/** CatalogQueries over plain arrays, for unit tests; counts its calls so tests can see the cache. */
export class InMemoryCatalogQueries extends CatalogQueries {
  readonly regionsById = new Map<string, MemoryRegion>();
  readonly servers: MemoryServer[] = [];
  readonly volumes: MemoryVolume[] = [];
  readonly calls = { offerSnapshot: 0, regionLoad: 0, regions: 0 };

  async offerSnapshot(regionId: string, type: VolumeType): Promise<OfferSnapshot | undefined> {
    this.calls.offerSnapshot++;
    const region = this.regionsById.get(regionId);
    if (!region) return undefined;
    const offer = region.offers.find((o) => o.type === type);
    return { regionId, offer: offer && { ...offer, terms: [...offer.terms] }, zones: region.zones.map((z) => ({ ...z })) };
  }

  async regionLoad(regionId: string, orgId: string, perServerLimit: number): Promise<RegionLoad> {
    this.calls.regionLoad++;
    const region = this.regionsById.get(regionId);
    const live = this.volumes.filter((v) => !v.deleted);
    const used = live.filter((v) => v.regionId === regionId).reduce((sum, v) => sum + BigInt(v.sizeGb), 0n);
    const servers = this.servers
      .filter((s) => s.orgId === orgId && s.regionId === regionId && !s.deleted)
      .filter((s) => live.filter((v) => v.serverId === s.id).length < perServerLimit)
      .map((s) => ({ id: s.id, name: s.name, zoneId: s.zoneId }));
    return { freeGb: BigInt(region?.capacityGb ?? 0) - used, servers };
  }

  async regions(): Promise<RegionSummary[]> {
    this.calls.regions++;
    return [...this.regionsById.values()].map((r) => ({
      id: r.id,
      name: r.name,
      volumeTypes: r.offers.map((o) => o.type).sort(),
      zones: r.zones.map((z) => ({ ...z })),
      snapshotPrice: null,
    }));
  }
}
