import { Injectable } from '@nestjs/common';
import { Db, UNIQUE_VIOLATION, sqlState } from '../../../shared/database/transaction';
import { conflict } from '../../../shared/kernel/errors/domain-error';
import { Money } from '../../../shared/kernel/money/money';
import { Catalog } from '../application/catalog.port';
import { RegionDefinition, VolumeOffer, VolumeType, Zone } from '../domain/catalog';

interface OfferRow {
  region_id: string;
  type: VolumeType;
  min_gb: number;
  max_gb: number;
  step_gb: number;
  terms: number[];
  per_server_limit: number;
  price_usd_minor: string;
  price_idr_minor: string;
}

export const toOffer = (r: OfferRow): VolumeOffer => ({
  regionId: r.region_id,
  type: r.type,
  minGb: r.min_gb,
  maxGb: r.max_gb,
  stepGb: r.step_gb,
  terms: r.terms,
  perServerLimit: r.per_server_limit,
  price: { USD: Money.ofMinor('USD', BigInt(r.price_usd_minor)), IDR: Money.ofMinor('IDR', BigInt(r.price_idr_minor)) },
});

export const OFFER_COLUMNS =
  'region_id, type, min_gb, max_gb, step_gb, terms, per_server_limit, price_usd_minor::text, price_idr_minor::text';

@Injectable()
export class TypeOrmCatalog extends Catalog {
  constructor(private readonly db: Db) {
    super();
  }

  async createRegion(region: RegionDefinition): Promise<void> {
    try {
      await this.db.query('INSERT INTO regions (id, name, capacity_gb) VALUES ($1, $2, $3)', [region.id, region.name, region.capacityGb]);
      for (const zone of region.zones) {
        await this.db.query('INSERT INTO zones (id, region_id, available) VALUES ($1, $2, $3)', [zone.id, region.id, zone.available]);
      }
      for (const o of region.offers) {
        await this.db.query(
          `INSERT INTO volume_offers (region_id, type, min_gb, max_gb, step_gb, terms, per_server_limit, price_usd_minor, price_idr_minor)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
          [region.id, o.type, o.minGb, o.maxGb, o.stepGb, o.terms, o.perServerLimit, o.price.USD.minor.toString(), o.price.IDR.minor.toString()],
        );
      }
    } catch (err) {
      if (sqlState(err) === UNIQUE_VIOLATION) throw conflict(`Region ${region.id}, one of its zones or offers exists already`);
      throw err;
    }
  }

  async regionExists(regionId: string): Promise<boolean> {
    return (await this.db.one('SELECT 1 FROM regions WHERE id = $1', [regionId])) !== undefined;
  }

  async offer(regionId: string, type: VolumeType): Promise<VolumeOffer | undefined> {
    const row = await this.db.one<OfferRow>(`SELECT ${OFFER_COLUMNS} FROM volume_offers WHERE region_id = $1 AND type = $2`, [regionId, type]);
    return row && toOffer(row);
  }

  async zoneInRegion(regionId: string, zoneId: string): Promise<boolean> {
    return (await this.db.one('SELECT 1 FROM zones WHERE id = $1 AND region_id = $2', [zoneId, regionId])) !== undefined;
  }

  async findZone(zoneId: string): Promise<(Zone & { regionId: string }) | undefined> {
    const row = await this.db.one<{ id: string; region_id: string; available: boolean }>(
      'SELECT id, region_id, available FROM zones WHERE id = $1',
      [zoneId],
      'catalog_find_zone',
    );
    return row && { id: row.id, regionId: row.region_id, available: row.available };
  }

  async zonesOf(regionId: string): Promise<Zone[]> {
    const rows = await this.db.query<{ id: string; available: boolean }>(
      'SELECT id, available FROM zones WHERE region_id = $1 ORDER BY id',
      [regionId],
      'catalog_zones_of',
    );
    return rows.map((r) => ({ id: r.id, available: r.available }));
  }

  async setZoneAvailable(zoneId: string, available: boolean): Promise<(Zone & { regionId: string }) | undefined> {
    const row = await this.db.one<{ id: string; region_id: string; available: boolean }>(
      'UPDATE zones SET available = $2 WHERE id = $1 RETURNING id, region_id, available',
      [zoneId, available],
    );
    return row && { id: row.id, regionId: row.region_id, available: row.available };
  }

  async setRegionCapacity(regionId: string, capacityGb: number): Promise<{ id: string; name: string; capacityGb: number } | undefined> {
    // Never below what the region's live volumes use (regions_used_within_capacity): the
    // conditional UPDATE takes the row lock, so no purchase slips in between check and write.
    const row = await this.db.one<{ id: string; name: string; capacity_gb: string }>(
      'UPDATE regions SET capacity_gb = $2 WHERE id = $1 AND used_gb <= $2 RETURNING id, name, capacity_gb::text',
      [regionId, capacityGb],
    );
    if (row) return { id: row.id, name: row.name, capacityGb: Number(row.capacity_gb) };
    const current = await this.db.one<{ used_gb: string }>('SELECT used_gb::text FROM regions WHERE id = $1', [regionId]);
    if (!current) return undefined;
    throw conflict(
      `Region ${regionId} has ${current.used_gb} GB in use by its volumes; its capacity cannot be set below that (asked for ${capacityGb} GB)`,
    );
  }
}
