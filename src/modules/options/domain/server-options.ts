import { PricePair } from '../../../shared/kernel/money/money';
import { Image, ServerPlan, Zone } from './catalog';

/** What the catalog holds about one region's server offer, read in one statement. */
export interface ServerOfferSnapshot {
  regionId: string;
  /** Null when the region sells no servers. */
  terms: number[] | null;
  vcpuCapacity: number;
  vcpusUsed: number;
  /** The region's switch or the global one. */
  purchasesPaused: boolean;
  zones: Zone[];
  /** The plans sold there, by vcpus, memory_gb, id. */
  plans: (ServerPlan & { price: PricePair })[];
  /** Every image, by id. */
  images: Image[];
}

export interface ServerOptions {
  region: string;
  inStock: boolean;
  purchasesPaused: boolean;
  terms: number[];
  zones: Zone[];
  plans: (ServerPlan & { price: PricePair; inStock: boolean })[];
  images: Image[];
}

/**
 * servers.md: a plan is in stock when its vCPUs fit the region's free vCPUs (capacity − used), the
 * region when one plan is. Undefined when the region sells no servers.
 */
export function serverOptions(s: ServerOfferSnapshot): ServerOptions | undefined {
  if (s.terms === null) return undefined;
  const free = s.vcpuCapacity - s.vcpusUsed;
  const plans = s.plans.map((p) => ({ ...p, inStock: p.vcpus <= free }));
  return {
    region: s.regionId,
    inStock: plans.some((p) => p.inStock),
    purchasesPaused: s.purchasesPaused,
    terms: [...s.terms].sort((a, b) => a - b),
    zones: s.zones,
    plans,
    images: s.images,
  };
}
