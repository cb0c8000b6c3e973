import { RegionDefinition, VolumeOffer, VolumeType } from '../domain/catalog';

/** Regions, their zones and their volume offers: what the provider sells where. */
export abstract class Catalog {
  /** Creates a region with its zones and offers; conflict when the region or a zone id exists. */
  abstract createRegion(region: RegionDefinition): Promise<void>;
  abstract offer(regionId: string, type: VolumeType): Promise<VolumeOffer | undefined>;
  /** Whether the zone belongs to the region. */
  abstract zoneInRegion(regionId: string, zoneId: string): Promise<boolean>;
}
