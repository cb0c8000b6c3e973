import { Injectable } from '@nestjs/common';
import { Db, UNIQUE_VIOLATION, constraintOf, sqlState } from '../../../shared/database/transaction';
import { DomainError, conflict } from '../../../shared/kernel/errors/domain-error';
import { Money, PricePair, pricePairOfMinor } from '../../../shared/kernel/money/money';
import { CapacityChange, Catalog } from '../application/catalog.port';
import { Image, PurchaseSwitches, RegionDefinition, RegionDetail, ServerPlan, VolumeOffer, VolumeType, Zone } from '../domain/catalog';

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
      await this.db.query(
        `INSERT INTO regions (id, name, capacity_gb, vcpu_capacity, snapshot_price_usd_minor, snapshot_price_idr_minor, ipv6_prefix)
         VALUES ($1, $2, $3, $4, $5, $6, COALESCE($7::cidr, next_region_ipv6_prefix()))`,
        [
          region.id,
          region.name,
          region.capacityGb,
          region.serverOffer?.vcpuCapacity ?? 0,
          region.snapshotPrice?.USD.minor.toString() ?? null,
          region.snapshotPrice?.IDR.minor.toString() ?? null,
          region.ipv6Prefix ?? null,
        ],
      );
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
      if (region.reservedIpv4) {
        await this.db.query('UPDATE regions SET reserved_ipv4_price_usd_minor = $2, reserved_ipv4_price_idr_minor = $3 WHERE id = $1', [
          region.id, region.reservedIpv4.price.USD.minor.toString(), region.reservedIpv4.price.IDR.minor.toString(),
        ]);
        await this.db.query('INSERT INTO reserved_ip_pool (ip, region_id) SELECT unnest($2::inet[]), $1', [region.id, region.reservedIpv4.addresses]);
      }
      if (region.serverOffer) {
        await this.db.query('INSERT INTO server_offers (region_id, terms) VALUES ($1, $2)', [region.id, region.serverOffer.terms]);
        for (const p of region.serverOffer.plans) {
          await this.db.query(
            'INSERT INTO server_offer_plans (region_id, plan_id, price_usd_minor, price_idr_minor) VALUES ($1, $2, $3, $4)',
            [region.id, p.planId, p.price.USD.minor.toString(), p.price.IDR.minor.toString()],
          );
        }
      }
    } catch (err) {
      if (sqlState(err) === UNIQUE_VIOLATION) throw conflict(`Region ${region.id}, one of its zones or offers, or its IPv6 prefix, exists already`);
      throw err;
    }
  }

  async regionExists(regionId: string): Promise<boolean> {
    return (await this.db.one('SELECT 1 FROM regions WHERE id = $1', [regionId])) !== undefined;
  }

  async regionIds(): Promise<string[]> {
    return (await this.db.query<{ id: string }>('SELECT id FROM regions ORDER BY id COLLATE "C"')).map((r) => r.id);
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

  async setZoneAvailable(zoneId: string, available: boolean): Promise<(Zone & { regionId: string; previous: boolean }) | undefined> {
    const row = await this.db.one<{ id: string; region_id: string; available: boolean; previous: boolean }>(
      `UPDATE zones z SET available = $2 FROM (SELECT id, available FROM zones WHERE id = $1 FOR UPDATE) old
        WHERE z.id = old.id RETURNING z.id, z.region_id, z.available, old.available AS previous`,
      [zoneId, available],
    );
    return row && { id: row.id, regionId: row.region_id, available: row.available, previous: row.previous };
  }

  async setRegionCapacity(regionId: string, capacityGb: number): Promise<CapacityChange<{ id: string; name: string; capacityGb: number }> | undefined> {
    // Never below what the region's live volumes use: region_capacity_set locks the region's row
    // and its slots, so no purchase slips in between check and write, and changes nothing below.
    const row = await this.db.one<{ done: boolean; used_gb: string; id: string; name: string; capacity_gb: string }>(
      'SELECT done, used_gb::text, $1::text AS id, name, capacity_gb::text FROM region_capacity_set($1, $2, NULL)',
      [regionId, capacityGb],
    );
    if (!row) return undefined;
    if (row.done) return { set: true, id: row.id, name: row.name, capacityGb: Number(row.capacity_gb) };
    return { set: false, inUse: Number(row.used_gb) };
  }

  async createServerPlan(plan: ServerPlan): Promise<void> {
    try {
      await this.db.query('INSERT INTO server_plans (id, vcpus, memory_gb, disk_gb) VALUES ($1, $2, $3, $4)', [plan.id, plan.vcpus, plan.memoryGb, plan.diskGb]);
    } catch (err) {
      if (sqlState(err) === UNIQUE_VIOLATION) throw conflict(`Server plan ${plan.id} exists already`);
      throw err;
    }
  }

  async createImage(image: Image): Promise<void> {
    try {
      await this.db.query('INSERT INTO images (id, name, type) VALUES ($1, $2, $3)', [image.id, image.name, image.type]);
    } catch (err) {
      if (sqlState(err) === UNIQUE_VIOLATION) throw conflict(`Image ${image.id} exists already`);
      throw err;
    }
  }

  async serverPlanExists(planId: string): Promise<boolean> {
    return (await this.db.one('SELECT 1 FROM server_plans WHERE id = $1', [planId])) !== undefined;
  }

  async setRegionVcpus(regionId: string, vcpus: number): Promise<CapacityChange<{ id: string; name: string; vcpuCapacity: number; vcpusUsed: number }> | undefined> {
    // Never below the vCPUs of its live servers: region_capacity_set locks the region's row and
    // its slots, so no purchase slips in between check and write, and changes nothing below.
    const row = await this.db.one<{ done: boolean; vcpus_used: string; id: string; name: string; vcpu_capacity: string }>(
      'SELECT done, vcpus_used::text, $1::text AS id, name, vcpu_capacity::text FROM region_capacity_set($1, NULL, $2)',
      [regionId, vcpus],
    );
    if (!row) return undefined;
    if (row.done) return { set: true, id: row.id, name: row.name, vcpuCapacity: Number(row.vcpu_capacity), vcpusUsed: Number(row.vcpus_used) };
    return { set: false, inUse: Number(row.vcpus_used) };
  }

  async setPurchasesPaused(regionId: string | null, paused: boolean): Promise<PurchaseSwitches | undefined> {
    if (regionId === null) {
      await this.db.query("UPDATE purchase_switches SET paused = $1 WHERE scope = 'global'", [paused]);
    } else {
      const row = await this.db.one('UPDATE regions SET purchases_paused = $2 WHERE id = $1 RETURNING id', [regionId, paused]);
      if (!row) return undefined;
    }
    const global = await this.db.one<{ paused: boolean }>("SELECT paused FROM purchase_switches WHERE scope = 'global'");
    const regions = await this.db.query<{ id: string; purchases_paused: boolean }>('SELECT id, purchases_paused FROM regions ORDER BY id COLLATE "C"');
    return { global: global?.paused ?? false, regions: Object.fromEntries(regions.map((r) => [r.id, r.purchases_paused])) };
  }

  async regionDetails(regionId?: string, lock = false): Promise<RegionDetail[]> {
    // The row lock first (its own statement: FOR UPDATE takes no subqueries), then one read.
    if (regionId !== undefined && lock) await this.db.query('SELECT 1 FROM regions WHERE id = $1 FOR UPDATE', [regionId]);
    const rows = await this.db.query<{
      id: string; name: string; capacity_gb: string; used_gb: string; vcpu_capacity: string; vcpus_used: string; purchases_paused: boolean;
      zones: { id: string; available: boolean }[];
      volume_prices: { type: VolumeType; usd: string; idr: string }[];
      plan_prices: { plan_id: string; usd: string; idr: string }[];
      ipv6_prefix: string; ipv6_subnets_used: number; rip_usd: string | null; rip_idr: string | null; pool_addresses: number; pool_held: number;
    }>(
      `SELECT r.id, r.name, r.capacity_gb::text, u.used_gb::text, r.vcpu_capacity::text, u.vcpus_used::text, r.purchases_paused,
              COALESCE((SELECT json_agg(json_build_object('id', z.id, 'available', z.available) ORDER BY z.id COLLATE "C")
                          FROM zones z WHERE z.region_id = r.id), '[]'::json) AS zones,
              COALESCE((SELECT json_agg(json_build_object('type', o.type, 'usd', o.price_usd_minor::text, 'idr', o.price_idr_minor::text) ORDER BY o.type COLLATE "C")
                          FROM volume_offers o WHERE o.region_id = r.id), '[]'::json) AS volume_prices,
              COALESCE((SELECT json_agg(json_build_object('plan_id', p.plan_id, 'usd', p.price_usd_minor::text, 'idr', p.price_idr_minor::text) ORDER BY p.plan_id COLLATE "C")
                          FROM server_offer_plans p WHERE p.region_id = r.id), '[]'::json) AS plan_prices,
              r.ipv6_prefix::text AS ipv6_prefix, u.ipv6_subnets_used,
              r.reserved_ipv4_price_usd_minor::text AS rip_usd, r.reserved_ipv4_price_idr_minor::text AS rip_idr,
              (SELECT count(*) FROM reserved_ip_pool p WHERE p.region_id = r.id)::int AS pool_addresses,
              (SELECT count(*) FROM reserved_ip_pool p WHERE p.region_id = r.id AND p.reserved_ip_id IS NOT NULL)::int AS pool_held
         FROM regions r JOIN region_usage u ON u.id = r.id
        WHERE $1::text IS NULL OR r.id = $1
        ORDER BY r.id COLLATE "C"`,
      [regionId ?? null],
    );
    return rows.map((r) => ({
      id: r.id,
      name: r.name,
      diskCapacityGb: Number(r.capacity_gb),
      diskUsedGb: Number(r.used_gb),
      vcpuCapacity: Number(r.vcpu_capacity),
      vcpusUsed: Number(r.vcpus_used),
      purchasesPaused: r.purchases_paused,
      zones: r.zones.map((z) => ({ id: z.id, available: z.available })),
      volumePrices: r.volume_prices.map((o) => ({ type: o.type, price: pricePairOfMinor(o.usd, o.idr) })),
      planPrices: r.plan_prices.map((p) => ({ planId: p.plan_id, price: pricePairOfMinor(p.usd, p.idr) })),
      ipv6Prefix: r.ipv6_prefix,
      ipv6SubnetsUsed: Number(r.ipv6_subnets_used),
      reservedIpv4Price: r.rip_usd === null || r.rip_idr === null ? null : pricePairOfMinor(r.rip_usd, r.rip_idr),
      reservedIpv4Pool: { addresses: Number(r.pool_addresses), held: Number(r.pool_held) },
    }));
  }

  async globalPurchasesPaused(): Promise<boolean> {
    return (await this.db.one<{ paused: boolean }>("SELECT paused FROM purchase_switches WHERE scope = 'global'"))?.paused ?? false;
  }

  async setVolumePrice(regionId: string, type: VolumeType, price: PricePair): Promise<boolean> {
    const row = await this.db.one(
      'UPDATE volume_offers SET price_usd_minor = $3, price_idr_minor = $4 WHERE region_id = $1 AND type = $2 RETURNING 1',
      [regionId, type, price.USD.minor.toString(), price.IDR.minor.toString()],
    );
    return row !== undefined;
  }

  async setIpv6Prefix(regionId: string, prefix: string): Promise<{ set: true } | { set: false; takenBy: string } | { set: false; inUse: number }> {
    const holder = await this.db.one<{ id: string }>('SELECT id FROM regions WHERE ipv6_prefix = $2::cidr AND id <> $1', [regionId, prefix]);
    if (holder) return { set: false, takenBy: holder.id };
    const current = await this.db.one<{ same: boolean }>('SELECT ipv6_prefix = $2::cidr AS same FROM regions WHERE id = $1', [regionId, prefix]);
    if (!current || current.same) return { set: true };
    const live = await this.db.one<{ n: number }>(
      'SELECT count(*)::int AS n FROM servers WHERE region_id = $1 AND deleted_at IS NULL AND ipv6 IS NOT NULL',
      [regionId],
    );
    if (live && live.n > 0) return { set: false, inUse: live.n };
    try {
      await this.db.query('UPDATE regions SET ipv6_prefix = $2::cidr WHERE id = $1', [regionId, prefix]);
    } catch (err) {
      // Another region took it meanwhile (the unique index decides a race).
      if (sqlState(err) === UNIQUE_VIOLATION && constraintOf(err) === 'regions_ipv6_prefix_key') {
        throw new DomainError('conflict', `ipv6_prefix ${prefix} was given to another region meanwhile; nothing was changed`, { field: 'ipv6_prefix' });
      }
      throw err;
    }
    return { set: true };
  }

  async addReservedIpv4Addresses(regionId: string, addresses: readonly string[]): Promise<{ added: number } | { taken: { ip: string; regionId: string } }> {
    const held = await this.db.one<{ ip: string; region_id: string }>(
      'SELECT host(ip) AS ip, region_id FROM reserved_ip_pool WHERE ip = ANY($1::inet[]) ORDER BY ip LIMIT 1',
      [[...addresses]],
    );
    if (held) return { taken: { ip: held.ip, regionId: held.region_id } };
    try {
      await this.db.query('INSERT INTO reserved_ip_pool (ip, region_id) SELECT unnest($2::inet[]), $1', [regionId, [...addresses]]);
    } catch (err) {
      // Added to a pool meanwhile (the primary key decides a race).
      if (sqlState(err) === UNIQUE_VIOLATION && constraintOf(err) === 'reserved_ip_pool_pkey') {
        throw new DomainError('conflict', 'reserved_ipv4_pool_add: an address was added to a pool meanwhile; nothing was changed', { field: 'reserved_ipv4_pool_add' });
      }
      throw err;
    }
    return { added: addresses.length };
  }

  async setReservedIpv4Price(regionId: string, price: PricePair): Promise<boolean> {
    const row = await this.db.one(
      `UPDATE regions SET reserved_ipv4_price_usd_minor = $2, reserved_ipv4_price_idr_minor = $3
        WHERE id = $1 AND EXISTS (SELECT 1 FROM reserved_ip_pool p WHERE p.region_id = $1) RETURNING 1`,
      [regionId, price.USD.minor.toString(), price.IDR.minor.toString()],
    );
    return row !== undefined;
  }

  async setPlanPrice(regionId: string, planId: string, price: PricePair): Promise<boolean> {
    const row = await this.db.one(
      'UPDATE server_offer_plans SET price_usd_minor = $3, price_idr_minor = $4 WHERE region_id = $1 AND plan_id = $2 RETURNING 1',
      [regionId, planId, price.USD.minor.toString(), price.IDR.minor.toString()],
    );
    return row !== undefined;
  }
}
