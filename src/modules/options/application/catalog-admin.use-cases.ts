import { Injectable } from '@nestjs/common';
import ipaddr from 'ipaddr.js';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { DomainError, invalidRequest, notFound } from '../../../shared/kernel/errors/domain-error';
import { PricePair } from '../../../shared/kernel/money/money';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { PurchaseSwitches, RegionDetail, VOLUME_TYPES, VolumeType, Zone, isVolumeType } from '../domain/catalog';
import { capacityValue, priceValue, switchValue } from '../domain/catalog-changes';
import { parseIpv6Prefix } from '../../servers/domain/network';
import { MAX_RESERVED_IPV4_POOL, expandReservedIpv4Pool } from '../domain/reserved-ipv4-pool';
import { Catalog } from './catalog.port';

/**
 * Who changes the catalog: the operator CLI (actor `system`) or a staff member of the admin API
 * (actor `staff`, the audit keeps the role, never who).
 */
export type CatalogActor = { type: 'system' } | { type: 'staff'; role: string };
export const CLI_ACTOR: CatalogActor = { type: 'system' };

const auditActor = (actor: CatalogActor) => ({ actorType: actor.type, actorId: actor.type === 'staff' ? actor.role : null });

/**
 * Operator CLI `zone:set` and PATCH /admin/v1/zones/{id}: opens or closes a zone to new disks and
 * servers. GET /v1/volume-options shows the change within its catalog cache time (5 s); GET
 * /v1/regions at once.
 */
@Injectable()
export class SetZoneAvailability {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly catalog: Catalog,
    private readonly audit: AuditTrail,
  ) {}

  async execute(input: { zoneId: string; available: unknown }, actor: CatalogActor = CLI_ACTOR): Promise<Zone & { regionId: string }> {
    return (await this.change(input, actor)).zone;
  }

  /** The change, with what the zone was before it. */
  async change(input: { zoneId: string; available: unknown }, actor: CatalogActor = CLI_ACTOR): Promise<{ zone: Zone & { regionId: string }; wasAvailable: boolean }> {
    const available = switchValue(input.available, 'available');
    return this.uow.run(async () => {
      const changed = await this.catalog.setZoneAvailable(input.zoneId, available);
      if (!changed) throw notFound(`Zone ${input.zoneId} not found`);
      const { previous, ...zone } = changed;
      await this.audit.record({ orgId: null, ...auditActor(actor), action: 'catalog.zone_set', targetId: zone.id, targetType: 'zone', ipAddress: null, data: { available } });
      return { zone, wasAvailable: previous };
    });
  }
}

/**
 * Operator CLI `region:capacity` and PATCH /admin/v1/regions/{id} `disk_capacity_gb`: sets the disk
 * capacity shared by premium and ssd, never below what the region's live volumes use (409
 * conflict naming the field and `in_use`). Stock (in_stock) is read at every request from this
 * and the region's used_gb counter, never cached.
 */
@Injectable()
export class SetRegionCapacity {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly catalog: Catalog,
    private readonly audit: AuditTrail,
  ) {}

  async execute(input: { regionId: string; gb: unknown; field?: string }, actor: CatalogActor = CLI_ACTOR): Promise<{ id: string; name: string; capacityGb: number }> {
    const field = input.field ?? 'gb';
    const capacityGb = capacityValue(input.gb, field, 'GB');
    return this.uow.run(async () => {
      const change = await this.catalog.setRegionCapacity(input.regionId, capacityGb);
      if (!change) throw notFound(`Region ${input.regionId} not found`);
      if (!change.set) {
        throw new DomainError(
          'conflict',
          `Region ${input.regionId} has ${change.inUse} GB in use by its volumes; its capacity cannot be set below that (asked for ${capacityGb} GB)`,
          { field, in_use: change.inUse },
        );
      }
      await this.audit.record({ orgId: null, ...auditActor(actor), action: 'catalog.region_capacity_set', targetId: change.id, targetType: 'region', ipAddress: null, data: { capacity_gb: capacityGb } });
      return { id: change.id, name: change.name, capacityGb: change.capacityGb };
    });
  }
}

/**
 * Operator CLI `region:vcpus` and PATCH /admin/v1/regions/{id} `vcpu_capacity`: sets the vCPUs a
 * region sells servers from, never below the vCPUs of its servers not deleted (409 conflict
 * naming the field and `in_use`). server-options reads it at every request.
 */
@Injectable()
export class SetRegionVcpus {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly catalog: Catalog,
    private readonly audit: AuditTrail,
  ) {}

  async execute(
    input: { regionId: string; vcpus: unknown; field?: string },
    actor: CatalogActor = CLI_ACTOR,
  ): Promise<{ id: string; name: string; vcpuCapacity: number; vcpusUsed: number }> {
    const field = input.field ?? 'vcpus';
    const vcpus = capacityValue(input.vcpus, field, 'vCPUs');
    return this.uow.run(async () => {
      const change = await this.catalog.setRegionVcpus(input.regionId, vcpus);
      if (!change) throw notFound(`Region ${input.regionId} not found`);
      if (!change.set) {
        throw new DomainError(
          'conflict',
          `Region ${input.regionId} has ${change.inUse} vCPUs in use by its servers; its vCPU capacity cannot be set below that (asked for ${vcpus})`,
          { field, in_use: change.inUse },
        );
      }
      await this.audit.record({ orgId: null, ...auditActor(actor), action: 'catalog.region_vcpus_set', targetId: change.id, targetType: 'region', ipAddress: null, data: { vcpu_capacity: vcpus } });
      return { id: change.id, name: change.name, vcpuCapacity: change.vcpuCapacity, vcpusUsed: change.vcpusUsed };
    });
  }
}

/**
 * Operator CLI `purchases:pause` and `purchases:resume`, and PATCH /admin/v1/regions/{id}
 * `purchases_paused`: the global switch (no region; CLI only) or one region's. A server purchase
 * reads both switches in its transaction (503 purchases_paused); disks and renewals are unaffected.
 */
@Injectable()
export class SetPurchasesPaused {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly catalog: Catalog,
    private readonly audit: AuditTrail,
  ) {}

  async execute(input: { regionId: string | null; paused: unknown; field?: string }, actor: CatalogActor = CLI_ACTOR): Promise<PurchaseSwitches> {
    const paused = switchValue(input.paused, input.field ?? 'paused');
    return this.uow.run(async () => {
      const switches = await this.catalog.setPurchasesPaused(input.regionId, paused);
      if (!switches) throw notFound(`Region ${input.regionId} not found`);
      await this.audit.record({
        orgId: null,
        ...auditActor(actor),
        action: paused ? 'catalog.purchases_paused' : 'catalog.purchases_resumed',
        targetId: input.regionId ?? 'global',
        targetType: input.regionId === null ? 'global' : 'region',
        ipAddress: null,
        data: { region: input.regionId },
      });
      return switches;
    });
  }
}

/**
 * PATCH /admin/v1/regions/{id} `ipv6_prefix` (what the seed file's `ipv6_prefix` sets): the
 * region's IPv6 /48, given as its network address; not another region's (409 conflict,
 * details.existing_id), and changed only while no live server of the region holds an address of
 * the current one (409 conflict, details.in_use). The count of /64s handed out stays (a /64 is
 * never handed out twice). Audited `catalog.region_ipv6_prefix_set`. Runs in the caller's
 * transaction, the region's row locked.
 */
@Injectable()
export class SetRegionIpv6Prefix {
  constructor(
    private readonly catalog: Catalog,
    private readonly audit: AuditTrail,
  ) {}

  async execute(region: RegionDetail, raw: unknown, actor: CatalogActor): Promise<void> {
    const prefix = ipv6PrefixValue(raw);
    if (prefix === region.ipv6Prefix) return;
    const change = await this.catalog.setIpv6Prefix(region.id, prefix);
    if (!change.set && 'takenBy' in change) {
      throw new DomainError('conflict', `ipv6_prefix ${prefix} is region ${change.takenBy}'s; give a /48 no other region has`, { field: 'ipv6_prefix', existing_id: change.takenBy });
    }
    if (!change.set) {
      throw new DomainError(
        'conflict',
        `Region ${region.id} has ${change.inUse} live server(s) with addresses of ${region.ipv6Prefix}; its prefix cannot change while they live`,
        { field: 'ipv6_prefix', in_use: change.inUse },
      );
    }
    await this.audit.record({
      orgId: null, ...auditActor(actor), action: 'catalog.region_ipv6_prefix_set', targetId: region.id, targetType: 'region', ipAddress: null,
      data: { ipv6_prefix: { old: region.ipv6Prefix, new: prefix } },
    });
  }
}

/**
 * PATCH /admin/v1/regions/{id} `reserved_ipv4_pool_add` (what the seed file's
 * `reserved_ipv4_pool` lists): IPv4 CIDR blocks whose every address joins the region's pool of
 * reservable addresses (each block at its first address, none overlapping another; 400 naming
 * `reserved_ipv4_pool_add[i]`); an address a pool holds already is 409 conflict naming its block;
 * the pool holds at most MAX_RESERVED_IPV4_POOL addresses. Audited `catalog.reserved_ipv4_pool_added`.
 * Runs in the caller's transaction, the region's row locked.
 */
@Injectable()
export class AddReservedIpv4Pool {
  constructor(
    private readonly catalog: Catalog,
    private readonly audit: AuditTrail,
  ) {}

  async execute(region: RegionDetail, raw: unknown, actor: CatalogActor): Promise<void> {
    const { blocks, addresses } = poolBlocksValue(raw);
    if (region.reservedIpv4Pool.addresses + addresses.length > MAX_RESERVED_IPV4_POOL) {
      throw invalidRequest(
        `reserved_ipv4_pool_add: region ${region.id}'s pool may hold at most ${MAX_RESERVED_IPV4_POOL} addresses (it holds ${region.reservedIpv4Pool.addresses}; these add ${addresses.length})`,
        { field: 'reserved_ipv4_pool_add' },
      );
    }
    const added = await this.catalog.addReservedIpv4Addresses(region.id, addresses);
    if ('taken' in added) {
      const i = blocks.findIndex((b) => ipaddr.IPv4.parse(added.taken.ip).match(ipaddr.IPv4.parseCIDR(b)));
      throw new DomainError(
        'conflict',
        `reserved_ipv4_pool_add[${i}]: ${added.taken.ip} is in region ${added.taken.regionId}'s pool already`,
        { field: `reserved_ipv4_pool_add[${i}]`, existing_id: added.taken.regionId },
      );
    }
    await this.audit.record({
      orgId: null, ...auditActor(actor), action: 'catalog.reserved_ipv4_pool_added', targetId: region.id, targetType: 'region', ipAddress: null,
      data: { blocks, addresses: addresses.length },
    });
  }
}

/** `ipv6_prefix`: a string, an IPv6 /48 at its network address (400 naming it otherwise); canonical. */
function ipv6PrefixValue(raw: unknown): string {
  if (typeof raw !== 'string') throw invalidRequest('ipv6_prefix must be an IPv6 /48 given as its network address, e.g. 2001:db8:10::/48', { field: 'ipv6_prefix' });
  return parseIpv6Prefix(raw, 'ipv6_prefix');
}

/** `reserved_ipv4_pool_add`: 1 to 100 CIDR strings, expanded (400 naming the member otherwise). */
function poolBlocksValue(raw: unknown): { blocks: string[]; addresses: string[] } {
  const field = 'reserved_ipv4_pool_add';
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > 100) {
    throw invalidRequest(`${field} must be a list of 1 to 100 IPv4 blocks in CIDR form, such as ["203.0.113.0/27"]`, { field });
  }
  const bad = raw.findIndex((b) => typeof b !== 'string');
  if (bad >= 0) throw invalidRequest(`${field}[${bad}] must be an IPv4 block in CIDR form, such as 203.0.113.0/27`, { field: `${field}[${bad}]` });
  const blocks = raw as string[];
  return { blocks, addresses: expandReservedIpv4Pool(blocks, field) };
}

/** A region's changeable state, as the staff audit keeps it before and after a change. */
export function regionState(r: RegionDetail) {
  return {
    disk_capacity_gb: r.diskCapacityGb, vcpu_capacity: r.vcpuCapacity, purchases_paused: r.purchasesPaused,
    ipv6_prefix: r.ipv6Prefix, reserved_ipv4_pool_addresses: r.reservedIpv4Pool.addresses,
  };
}

/** The regions as staff see them (GET /admin/v1/regions), by id, and the global purchase switch. */
@Injectable()
export class ListRegionDetails {
  constructor(private readonly catalog: Catalog) {}

  async execute(): Promise<{ regions: RegionDetail[]; globalPurchasesPaused: boolean }> {
    return { regions: await this.catalog.regionDetails(), globalPurchasesPaused: await this.catalog.globalPurchasesPaused() };
  }
}

const REGION_FIELDS = ['disk_capacity_gb', 'vcpu_capacity', 'purchases_paused', 'ipv6_prefix', 'reserved_ipv4_pool_add'] as const;

/**
 * PATCH /admin/v1/regions/{id} `{disk_capacity_gb?, vcpu_capacity?, purchases_paused?, ipv6_prefix?,
 * reserved_ipv4_pool_add?}`: each member through its use case (the CLI's region:capacity,
 * region:vcpus, purchases:pause|resume; SetRegionIpv6Prefix, AddReservedIpv4Pool), all in
 * one transaction under the region's row lock: every change is made or none. Answers the region
 * before and after.
 */
@Injectable()
export class UpdateRegion {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly catalog: Catalog,
    private readonly capacity: SetRegionCapacity,
    private readonly vcpus: SetRegionVcpus,
    private readonly purchases: SetPurchasesPaused,
    private readonly ipv6: SetRegionIpv6Prefix,
    private readonly pool: AddReservedIpv4Pool,
  ) {}

  async execute(regionId: string, changes: Partial<Record<(typeof REGION_FIELDS)[number], unknown>>, actor: CatalogActor): Promise<{ before: RegionDetail; after: RegionDetail }> {
    const given = REGION_FIELDS.filter((f) => changes[f] !== undefined);
    if (given.length === 0) throw invalidRequest(`Give at least one of ${REGION_FIELDS.join(', ')}`, { field: REGION_FIELDS[0] });
    // Every member's form first (400 before any 404 or 409).
    if (changes.disk_capacity_gb !== undefined) capacityValue(changes.disk_capacity_gb, 'disk_capacity_gb', 'GB');
    if (changes.vcpu_capacity !== undefined) capacityValue(changes.vcpu_capacity, 'vcpu_capacity', 'vCPUs');
    if (changes.purchases_paused !== undefined) switchValue(changes.purchases_paused, 'purchases_paused');
    if (changes.ipv6_prefix !== undefined) ipv6PrefixValue(changes.ipv6_prefix);
    if (changes.reserved_ipv4_pool_add !== undefined) poolBlocksValue(changes.reserved_ipv4_pool_add);
    return this.uow.run(async () => {
      const [before] = await this.catalog.regionDetails(regionId, true);
      if (!before) throw notFound(`Region ${regionId} not found`);
      if (changes.disk_capacity_gb !== undefined) await this.capacity.execute({ regionId, gb: changes.disk_capacity_gb, field: 'disk_capacity_gb' }, actor);
      if (changes.vcpu_capacity !== undefined) await this.vcpus.execute({ regionId, vcpus: changes.vcpu_capacity, field: 'vcpu_capacity' }, actor);
      if (changes.purchases_paused !== undefined) await this.purchases.execute({ regionId, paused: changes.purchases_paused, field: 'purchases_paused' }, actor);
      if (changes.ipv6_prefix !== undefined) await this.ipv6.execute(before, changes.ipv6_prefix, actor);
      if (changes.reserved_ipv4_pool_add !== undefined) await this.pool.execute(before, changes.reserved_ipv4_pool_add, actor);
      const [after] = await this.catalog.regionDetails(regionId);
      return { before, after };
    });
  }
}

export interface PriceChanges {
  volumes?: unknown;
  plans?: unknown;
  reserved_ipv4?: unknown;
}

type PriceTable = {
  volumes: Record<string, { USD: string; IDR: string }>;
  plans: Record<string, { USD: string; IDR: string }>;
  reserved_ipv4?: { USD: string; IDR: string } | null;
};

const pair = (p: PricePair) => ({ USD: p.USD.format(), IDR: p.IDR.format() });

const priceTable = (r: RegionDetail, only: { volumes: string[]; plans: string[]; reservedIpv4: boolean }): PriceTable => ({
  volumes: Object.fromEntries(r.volumePrices.filter((v) => only.volumes.includes(v.type)).map((v) => [v.type, pair(v.price)])),
  plans: Object.fromEntries(r.planPrices.filter((p) => only.plans.includes(p.planId)).map((p) => [p.planId, pair(p.price)])),
  ...(only.reservedIpv4 ? { reserved_ipv4: r.reservedIpv4Price && pair(r.reservedIpv4Price) } : {}),
});

/**
 * PATCH /admin/v1/regions/{id}/prices `{volumes?: {type: {USD, IDR}}, plans?: {plan: {USD, IDR}},
 * reserved_ipv4?: {USD, IDR}}` (a reserved IPv4 address's monthly price: the region's pool must hold
 * addresses, else 400 naming reserved_ipv4): the region's prices for new quotes and purchases (a bought resource keeps the price frozen on it,
 * renewals included; a quote keeps its own). One transaction under the region's row lock; the
 * audit (`catalog.prices_set`) keeps the old and the new prices of what changed.
 */
@Injectable()
export class SetRegionPrices {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly catalog: Catalog,
    private readonly audit: AuditTrail,
  ) {}

  async execute(regionId: string, changes: PriceChanges, actor: CatalogActor): Promise<{ before: PriceTable; after: PriceTable; region: RegionDetail }> {
    const volumes = this.entries(changes.volumes, 'volumes');
    const plans = this.entries(changes.plans, 'plans');
    const reservedIpv4 = changes.reserved_ipv4 === undefined ? undefined : priceValue(changes.reserved_ipv4, 'reserved_ipv4');
    if (volumes.length + plans.length === 0 && !reservedIpv4) throw invalidRequest('Give at least one price in volumes, plans or reserved_ipv4', { field: 'volumes' });
    const volumePrices: { type: VolumeType; price: PricePair }[] = volumes.map(([type, raw]) => {
      if (!isVolumeType(type)) throw invalidRequest(`volumes.${type} is not a disk type; give ${VOLUME_TYPES.join(' or ')}`, { field: `volumes.${type}` });
      return { type, price: priceValue(raw, `volumes.${type}`) };
    });
    const planPrices = plans.map(([planId, raw]) => ({ planId, price: priceValue(raw, `plans.${planId}`) }));

    return this.uow.run(async () => {
      const [before] = await this.catalog.regionDetails(regionId, true);
      if (!before) throw notFound(`Region ${regionId} not found`);
      for (const v of volumePrices) {
        if (!(await this.catalog.setVolumePrice(regionId, v.type, v.price))) {
          throw invalidRequest(`Region ${regionId} sells no ${v.type} disks; it sells ${before.volumePrices.map((p) => p.type).join(', ') || 'none'}`, { field: `volumes.${v.type}` });
        }
      }
      for (const p of planPrices) {
        if (!(await this.catalog.setPlanPrice(regionId, p.planId, p.price))) {
          throw invalidRequest(`Region ${regionId} does not sell plan ${p.planId}; it sells ${before.planPrices.map((x) => x.planId).join(', ') || 'no servers'}`, { field: `plans.${p.planId}` });
        }
      }
      if (reservedIpv4 && !(await this.catalog.setReservedIpv4Price(regionId, reservedIpv4))) {
        throw invalidRequest(`Region ${regionId} has no reserved IPv4 pool; add addresses (PATCH /admin/v1/regions/${regionId} reserved_ipv4_pool_add) before its price`, { field: 'reserved_ipv4' });
      }
      const [after] = await this.catalog.regionDetails(regionId);
      const only = { volumes: volumePrices.map((v) => v.type as string), plans: planPrices.map((p) => p.planId), reservedIpv4: reservedIpv4 !== undefined };
      const changed = { before: priceTable(before, only), after: priceTable(after, only) };
      await this.audit.record({ orgId: null, ...auditActor(actor), action: 'catalog.prices_set', targetId: regionId, targetType: 'region', ipAddress: null, data: changed });
      return { ...changed, region: after };
    });
  }

  /** The members of `volumes` or `plans`: an object of price pairs (absent: none). */
  private entries(raw: unknown, field: string): [string, unknown][] {
    if (raw === undefined) return [];
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw invalidRequest(`${field} must be an object of {USD, IDR} price pairs`, { field });
    const entries = Object.entries(raw as Record<string, unknown>);
    if (entries.length > 100) throw invalidRequest(`${field} holds at most 100 prices`, { field });
    for (const [key] of entries) {
      if (!/^[A-Za-z0-9_.-]{1,100}$/.test(key)) throw invalidRequest(`${field} names a disk type or plan id (1 to 100 of A-Z a-z 0-9 _ . -)`, { field });
    }
    return entries;
  }
}
