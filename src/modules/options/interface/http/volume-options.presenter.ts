import { formatPricePair } from '../../../../shared/kernel/money/money';
import { RegionSummary, VolumeOptions } from '../../domain/volume-options';

/** The Disk options object of interface.md 2.4, every field present, in the order of 2.4. */
export function presentVolumeOptions(o: VolumeOptions) {
  return {
    region: o.region,
    type: o.type,
    in_stock: o.inStock,
    min_gb: o.minGb,
    max_gb: o.maxGb,
    step_gb: o.stepGb,
    terms: o.terms,
    per_server_limit: o.perServerLimit,
    price_per_gb_month: formatPricePair(o.price),
    zones: o.zones.map((z) => ({ id: z.id, available: z.available, servers: z.servers.map((s) => ({ id: s.id, name: s.name })) })),
  };
}

/** One region of GET /v1/regions. */
export function presentRegion(r: RegionSummary) {
  return {
    id: r.id,
    name: r.name,
    volume_types: r.volumeTypes,
    zones: r.zones.map((z) => ({ id: z.id, available: z.available })),
    snapshot_price_per_gb_month: r.snapshotPrice ? formatPricePair(r.snapshotPrice) : null,
    reserved_ipv4_price_per_month: r.reservedIpv4Price ? formatPricePair(r.reservedIpv4Price) : null,
  };
}
