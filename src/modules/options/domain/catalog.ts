import { PricePair } from '../../../shared/kernel/money/money';

export const VOLUME_TYPES = ['premium', 'ssd'] as const;
export type VolumeType = (typeof VOLUME_TYPES)[number];

export function isVolumeType(value: unknown): value is VolumeType {
  return typeof value === 'string' && (VOLUME_TYPES as readonly string[]).includes(value);
}

export interface Zone {
  id: string;
  available: boolean;
}

export interface VolumeOffer {
  regionId: string;
  type: VolumeType;
  minGb: number;
  maxGb: number;
  stepGb: number;
  terms: number[];
  perServerLimit: number;
  price: PricePair;
}

export interface RegionDefinition {
  id: string;
  name: string;
  capacityGb: number;
  zones: Zone[];
  offers: Omit<VolumeOffer, 'regionId'>[];
  /** Absent: the region sells no servers (vcpu_capacity 0). */
  serverOffer?: ServerOfferDefinition;
  /** The snapshot price per GB-month; absent: the region sells no snapshots. */
  snapshotPrice?: PricePair;
  /** Reserved IPv4 addresses: the monthly price and the pool's addresses; absent: the region sells none. */
  reservedIpv4?: { price: PricePair; addresses: string[] };
  /** The region's IPv6 /48, canonical (servers get a /64 each out of it); absent: the next free one of 2001:db8::/32. */
  ipv6Prefix?: string;
}

/** A server plan of the catalog (servers.md): its boot disk (`diskGb`) is not counted in disk capacity. */
export interface ServerPlan {
  id: string;
  vcpus: number;
  memoryGb: number;
  diskGb: number;
}

export const IMAGE_TYPES = ['system', 'app'] as const;
export type ImageType = (typeof IMAGE_TYPES)[number];

/** An image: sold wherever servers are. */
export interface Image {
  id: string;
  name: string;
  type: ImageType;
}

/** What a region sells of servers: its vCPU capacity, terms and each plan's monthly price. */
export interface ServerOfferDefinition {
  vcpuCapacity: number;
  terms: number[];
  plans: { planId: string; price: PricePair }[];
}

/** The purchase switches (servers.md): the global one and each region's. */
export interface PurchaseSwitches {
  global: boolean;
  regions: Record<string, boolean>;
}

/** A region as staff see it (admin API): its capacity and use, its switch, its zones and what it charges. */
export interface RegionDetail {
  id: string;
  name: string;
  diskCapacityGb: number;
  diskUsedGb: number;
  vcpuCapacity: number;
  vcpusUsed: number;
  purchasesPaused: boolean;
  zones: Zone[];
  /** Each disk type it sells: the price per GB per month. */
  volumePrices: { type: VolumeType; price: PricePair }[];
  /** Each server plan it sells: the price per month. */
  planPrices: { planId: string; price: PricePair }[];
  /** Its IPv6 /48 (servers get the /64s inside it), canonical (2001:db8:10::/48), and how many /64s it has handed out. */
  ipv6Prefix: string;
  ipv6SubnetsUsed: number;
  /** The monthly price of a reserved IPv4 address; null: it sells none. */
  reservedIpv4Price: PricePair | null;
  /** Its pool of reservable IPv4 addresses: how many, and how many a live reservation holds. */
  reservedIpv4Pool: { addresses: number; held: number };
}
