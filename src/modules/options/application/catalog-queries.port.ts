import { VolumeType } from '../domain/catalog';
import { OfferSnapshot, RegionLoad, RegionSummary } from '../domain/volume-options';

/**
 * Read side of the catalog: what GET /v1/volume-options and GET /v1/regions show. Each method
 * is one SQL round trip.
 */
export abstract class CatalogQueries {
  /** The region's offer of that type and its zones; undefined when the region does not exist. */
  abstract offerSnapshot(regionId: string, type: VolumeType): Promise<OfferSnapshot | undefined>;

  /**
   * The region's free capacity and the organization's servers in it (not deleted) holding
   * fewer than `perServerLimit` data disks (volumes not deleted attached to them).
   */
  abstract regionLoad(regionId: string, orgId: string, perServerLimit: number): Promise<RegionLoad>;

  /** Every region with its zones. */
  abstract regions(): Promise<RegionSummary[]>;
}
