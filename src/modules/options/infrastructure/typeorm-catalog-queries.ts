import { Injectable } from '@nestjs/common';
import { Db } from '../../../shared/database/transaction';
import { pricePairOfMinor } from '../../../shared/kernel/money/money';
import { CatalogQueries } from '../application/catalog-queries.port';
import { VolumeType, Zone } from '../domain/catalog';
import { OfferSnapshot, RegionLoad, RegionSummary, ServerSlot } from '../domain/volume-options';
import { toOffer } from './typeorm-catalog';
import { SERVER_SLOTS_TAKEN } from '../../volumes/infrastructure/typeorm-volumes.repository';

interface SnapshotRow {
  region_id: string;
  type: VolumeType | null;
  min_gb: number | null;
  max_gb: number | null;
  step_gb: number | null;
  terms: number[] | null;
  per_server_limit: number | null;
  price_usd_minor: string | null;
  price_idr_minor: string | null;
  zones: Zone[];
}

interface LoadRow {
  free_gb: string;
  servers: { id: string; name: string; zone_id: string }[];
}

/** The region's zones as a JSON array, in the same statement as the rest (one round trip). */
const ZONES_JSON = `COALESCE((SELECT json_agg(json_build_object('id', z.id, 'available', z.available))
                                FROM zones z WHERE z.region_id = r.id), '[]'::json)`;

@Injectable()
export class TypeOrmCatalogQueries extends CatalogQueries {
  constructor(private readonly db: Db) {
    super();
  }

  async offerSnapshot(regionId: string, type: VolumeType): Promise<OfferSnapshot | undefined> {
    const row = await this.db.one<SnapshotRow>(
      `SELECT r.id AS region_id, o.type, o.min_gb, o.max_gb, o.step_gb, o.terms, o.per_server_limit,
              o.price_usd_minor::text, o.price_idr_minor::text, ${ZONES_JSON} AS zones
         FROM regions r
         LEFT JOIN volume_offers o ON o.region_id = r.id AND o.type = $2
        WHERE r.id = $1`,
      [regionId, type],
    );
    if (!row) return undefined;
    const { zones, ...offerRow } = row;
    // LEFT JOIN: every offer column is null together when the region sells no such type.
    const offer = offerRow.type === null ? undefined : toOffer(offerRow as Parameters<typeof toOffer>[0]);
    return { regionId: row.region_id, offer, zones: zones.map((z) => ({ id: z.id, available: z.available })) };
  }

  /**
   * One statement, so the capacity and the server list come from one snapshot. Free capacity is
   * the region's counter (capacity_gb - used_gb of region_usage: the sum over its slots, kept by the volumes triggers), never a sum over
   * its volumes; a server's data disks are the volumes not deleted attached to it
   * (volumes_server_live_idx, servers_org_zone_idx): the work grows with the organization's
   * servers in the region, not with the region. A named prepared statement.
   */
  async regionLoad(regionId: string, orgId: string, perServerLimit: number): Promise<RegionLoad> {
    const row = await this.db.one<LoadRow>(
      `SELECT (r.capacity_gb - r.used_gb)::text AS free_gb,
              COALESCE((SELECT json_agg(json_build_object('id', s.id, 'name', s.name, 'zone_id', s.zone_id))
                          FROM servers s
                         WHERE s.org_id = $2 AND s.region_id = r.id AND s.deleted_at IS NULL
                           AND s.status NOT IN ('creating', 'deleting')
                           AND (${SERVER_SLOTS_TAKEN('s.id')}) < $3),
                       '[]'::json) AS servers
         FROM region_usage r
        WHERE r.id = $1`,
      [regionId, orgId, perServerLimit],
      'catalog_region_load',
    );
    // The region was seen by offerSnapshot; regions are never deleted, but be safe.
    if (!row) return { freeGb: 0n, servers: [] };
    const servers: ServerSlot[] = row.servers.map((s) => ({ id: s.id, name: s.name, zoneId: s.zone_id }));
    return { freeGb: BigInt(row.free_gb), servers };
  }

  async regions(): Promise<RegionSummary[]> {
    const rows = await this.db.query<{ id: string; name: string; volume_types: VolumeType[]; zones: Zone[]; snap_usd: string | null; snap_idr: string | null; rip_usd: string | null; rip_idr: string | null }>(
      `SELECT r.id, r.name, r.snapshot_price_usd_minor::text AS snap_usd, r.snapshot_price_idr_minor::text AS snap_idr,
              r.reserved_ipv4_price_usd_minor::text AS rip_usd, r.reserved_ipv4_price_idr_minor::text AS rip_idr,
              ARRAY(SELECT o.type FROM volume_offers o WHERE o.region_id = r.id ORDER BY o.type COLLATE "C") AS volume_types,
              ${ZONES_JSON} AS zones
         FROM regions r`,
    );
    return rows.map((r) => ({
      id: r.id,
      name: r.name,
      volumeTypes: r.volume_types,
      zones: r.zones.map((z) => ({ id: z.id, available: z.available })),
      snapshotPrice: r.snap_usd === null || r.snap_idr === null ? null : pricePairOfMinor(r.snap_usd, r.snap_idr),
      reservedIpv4Price: r.rip_usd === null || r.rip_idr === null ? null : pricePairOfMinor(r.rip_usd, r.rip_idr),
    }));
  }
}
