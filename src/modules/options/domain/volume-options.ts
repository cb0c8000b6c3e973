import { PricePair } from '../../../shared/kernel/money/money';
import { VolumeOffer, VolumeType, Zone } from './catalog';

/**
 * The static part of the purchase options of one region and type: what the operator set up in
 * the catalog (the offer and the zones). It changes only through the operator CLI, so it may be
 * cached for a few seconds.
 */
export interface OfferSnapshot {
  regionId: string;
  /** undefined when the region sells no volumes of the type asked for */
  offer: VolumeOffer | undefined;
  zones: Zone[];
}

/** A server of the caller's organization that can take one more data disk. */
export interface ServerSlot {
  id: string;
  name: string;
  zoneId: string;
}

/**
 * The live part, read at every request and never cached: the region's free capacity (capacity
 * minus every volume not deleted, premium and ssd together) and the organization's servers in
 * the region holding fewer data disks than the offer's per-server limit.
 */
export interface RegionLoad {
  freeGb: bigint;
  servers: ServerSlot[];
}

export interface ZoneOptions {
  id: string;
  available: boolean;
  servers: { id: string; name: string }[];
}

/** The Disk options object of interface.md 2.4, as plain data. */
export interface VolumeOptions {
  region: string;
  type: VolumeType;
  inStock: boolean;
  minGb: number;
  maxGb: number;
  stepGb: number;
  terms: number[];
  perServerLimit: number;
  price: PricePair;
  zones: ZoneOptions[];
}

/** Code-unit order: the same on every engine and locale. */
const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** In stock while at least the smallest size still fits in the region's free capacity. */
export function hasStock(freeGb: bigint, minGb: number): boolean {
  return freeGb >= BigInt(minGb);
}

/**
 * Puts the offer, the zones (by id) and the eligible servers (each in its zone, by name then id)
 * together. Servers of a zone the catalog does not list are dropped.
 */
export function volumeOptions(offer: VolumeOffer, zones: Zone[], load: RegionLoad): VolumeOptions {
  const servers = [...load.servers].sort((a, b) => compare(a.name, b.name) || compare(a.id, b.id));
  return {
    region: offer.regionId,
    type: offer.type,
    inStock: hasStock(load.freeGb, offer.minGb),
    minGb: offer.minGb,
    maxGb: offer.maxGb,
    stepGb: offer.stepGb,
    terms: [...offer.terms].sort((a, b) => a - b),
    perServerLimit: offer.perServerLimit,
    price: offer.price,
    zones: [...zones]
      .sort((a, b) => compare(a.id, b.id))
      .map((zone) => ({
        id: zone.id,
        available: zone.available,
        servers: servers.filter((s) => s.zoneId === zone.id).map((s) => ({ id: s.id, name: s.name })),
      })),
  };
}

export interface RegionSummary {
  id: string;
  name: string;
  /** The disk types the region sells (it has an offer for), in code-unit order. */
  volumeTypes: VolumeType[];
  zones: Zone[];
  /** The snapshot price per GB-month; null when the region sells no snapshots. */
  snapshotPrice: PricePair | null;
  /** The monthly price of a reserved IPv4 address; null (or absent) when the region sells none. */
  reservedIpv4Price?: PricePair | null;
}
