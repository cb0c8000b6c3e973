import { Injectable } from '@nestjs/common';
import { Db } from '../../../shared/database/transaction';
import { pricePairOfMinor } from '../../../shared/kernel/money/money';
import { ServerCatalogQueries } from '../application/server-catalog-queries.port';
import { ImageType, Zone } from '../domain/catalog';
import { ServerOfferSnapshot } from '../domain/server-options';

interface SnapshotRow {
  region_id: string;
  terms: number[] | null;
  vcpu_capacity: string;
  vcpus_used: string;
  purchases_paused: boolean;
  zones: Zone[];
  plans: { id: string; vcpus: number; memory_gb: number; disk_gb: number; usd: string; idr: string }[];
  images: { id: string; name: string; type: ImageType }[];
}

/** "By id" is by the id's bytes (COLLATE "C"), whatever the database's collation. */
const SNAPSHOT = `
  SELECT r.id AS region_id, o.terms, r.vcpu_capacity::text, (SELECT vcpus_used FROM region_usage WHERE id = r.id)::text AS vcpus_used,
         (r.purchases_paused OR COALESCE((SELECT paused FROM purchase_switches WHERE scope = 'global'), false)) AS purchases_paused,
         COALESCE((SELECT json_agg(json_build_object('id', z.id, 'available', z.available) ORDER BY z.id COLLATE "C")
                     FROM zones z WHERE z.region_id = r.id), '[]'::json) AS zones,
         COALESCE((SELECT json_agg(json_build_object('id', p.id, 'vcpus', p.vcpus, 'memory_gb', p.memory_gb, 'disk_gb', p.disk_gb,
                                                     'usd', op.price_usd_minor::text, 'idr', op.price_idr_minor::text)
                                   ORDER BY p.vcpus, p.memory_gb, p.id COLLATE "C")
                     FROM server_offer_plans op JOIN server_plans p ON p.id = op.plan_id
                    WHERE op.region_id = r.id), '[]'::json) AS plans,
         COALESCE((SELECT json_agg(json_build_object('id', i.id, 'name', i.name, 'type', i.type) ORDER BY i.id COLLATE "C")
                     FROM images i), '[]'::json) AS images
    FROM regions r LEFT JOIN server_offers o ON o.region_id = r.id
   WHERE r.id = $1`;

@Injectable()
export class TypeOrmServerCatalogQueries extends ServerCatalogQueries {
  constructor(private readonly db: Db) {
    super();
  }

  async offerSnapshot(regionId: string): Promise<ServerOfferSnapshot | undefined> {
    const row = await this.db.one<SnapshotRow>(SNAPSHOT, [regionId], 'server_options_snapshot');
    if (!row) return undefined;
    return {
      regionId: row.region_id,
      terms: row.terms,
      vcpuCapacity: Number(row.vcpu_capacity),
      vcpusUsed: Number(row.vcpus_used),
      purchasesPaused: row.purchases_paused,
      zones: row.zones.map((z) => ({ id: z.id, available: z.available })),
      plans: row.plans.map((p) => ({ id: p.id, vcpus: p.vcpus, memoryGb: p.memory_gb, diskGb: p.disk_gb, price: pricePairOfMinor(p.usd, p.idr) })),
      images: row.images.map((i) => ({ id: i.id, name: i.name, type: i.type })),
    };
  }
}
