import { PricePair } from '../../../shared/kernel/money/money';
import { Image, PurchaseSwitches, RegionDefinition, RegionDetail, ServerPlan, VolumeOffer, VolumeType, Zone } from '../domain/catalog';

/** A capacity change: made, or refused because more than asked for is in use. */
export type CapacityChange<T> = ({ set: true } & T) | { set: false; inUse: number };

/** Regions, their zones and their volume offers: what the provider sells where. */
export abstract class Catalog {
  /** Creates a region with its zones and offers; conflict when the region or a zone id exists. */
  abstract createRegion(region: RegionDefinition): Promise<void>;
  abstract offer(regionId: string, type: VolumeType): Promise<VolumeOffer | undefined>;
  abstract regionExists(regionId: string): Promise<boolean>;
  /** Every region's id, ordered. */
  abstract regionIds(): Promise<string[]>;
  /** Whether the zone belongs to the region. */
  abstract zoneInRegion(regionId: string, zoneId: string): Promise<boolean>;
  /** The zone and its region; undefined when there is no such zone. */
  abstract findZone(zoneId: string): Promise<(Zone & { regionId: string }) | undefined>;
  /** The region's zones, by id. */
  abstract zonesOf(regionId: string): Promise<Zone[]>;
  /** Sets whether the zone accepts new disks and servers (and says what it was); undefined when there is no such zone. */
  abstract setZoneAvailable(zoneId: string, available: boolean): Promise<(Zone & { regionId: string; previous: boolean }) | undefined>;
  /**
   * Sets the region's disk capacity; undefined when there is no such region; refused (set false,
   * the GB in use) when the capacity asked for is below what its live volumes use.
   */
  abstract setRegionCapacity(regionId: string, capacityGb: number): Promise<CapacityChange<{ id: string; name: string; capacityGb: number }> | undefined>;

  /** Creates a server plan; conflict when its id exists. */
  abstract createServerPlan(plan: ServerPlan): Promise<void>;
  /** Creates an image; conflict when its id exists. */
  abstract createImage(image: Image): Promise<void>;
  abstract serverPlanExists(planId: string): Promise<boolean>;
  /**
   * Sets the region's vCPU capacity; undefined when there is no such region; refused (set false,
   * the vCPUs in use) when the capacity asked for is below the vCPUs of its servers not deleted.
   */
  abstract setRegionVcpus(regionId: string, vcpus: number): Promise<CapacityChange<{ id: string; name: string; vcpuCapacity: number; vcpusUsed: number }> | undefined>;
  /**
   * Sets the global purchase switch (regionId null) or the region's; false when there is no such
   * region. Answers every switch after the change.
   */
  abstract setPurchasesPaused(regionId: string | null, paused: boolean): Promise<PurchaseSwitches | undefined>;

  /** Every region (or the one asked for) as staff see it, by id; `lock` takes the region's row lock (inside a transaction). */
  abstract regionDetails(regionId?: string, lock?: boolean): Promise<RegionDetail[]>;
  /** The global purchase switch. */
  abstract globalPurchasesPaused(): Promise<boolean>;
  /** Sets the price per GB per month of a disk type the region sells; false when it sells no such type. */
  abstract setVolumePrice(regionId: string, type: VolumeType, price: PricePair): Promise<boolean>;
  /** Sets the monthly price of a plan the region sells; false when it does not sell that plan. */
  abstract setPlanPrice(regionId: string, planId: string, price: PricePair): Promise<boolean>;
  /**
   * Sets the region's IPv6 /48 (its row locked by the caller): `taken` when another region has it
   * (by id), `in_use` when live servers of the region hold addresses of its current prefix (how
   * many); the /64 counter stays (an address is never handed out twice). The same prefix: nothing.
   */
  abstract setIpv6Prefix(regionId: string, prefix: string): Promise<{ set: true } | { set: false; takenBy: string } | { set: false; inUse: number }>;
  /** Adds addresses to the region's reserved IPv4 pool: `taken` names one that a pool holds already (and its region). */
  abstract addReservedIpv4Addresses(regionId: string, addresses: readonly string[]): Promise<{ added: number } | { taken: { ip: string; regionId: string } }>;
  /** Sets the monthly price of a reserved IPv4 address in the region; false when its pool holds no address (nothing set). */
  abstract setReservedIpv4Price(regionId: string, price: PricePair): Promise<boolean>;
}
