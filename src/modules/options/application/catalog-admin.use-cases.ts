import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { invalidRequest, notFound } from '../../../shared/kernel/errors/domain-error';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { PurchaseSwitches, Zone } from '../domain/catalog';
import { Catalog } from './catalog.port';

/** Largest capacity the CLI accepts: stays an exact JS integer. */
const MAX_CAPACITY_GB = Number.MAX_SAFE_INTEGER;

/**
 * Operator CLI `zone:set`: opens or closes a zone to new disks. GET /v1/volume-options shows the
 * change within its catalog cache time (5 s); GET /v1/regions at once.
 */
@Injectable()
export class SetZoneAvailability {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly catalog: Catalog,
    private readonly audit: AuditTrail,
  ) {}

  async execute(input: { zoneId: string; available: string }): Promise<Zone & { regionId: string }> {
    if (input.available !== 'true' && input.available !== 'false') {
      throw invalidRequest('available must be true or false', { field: 'available' });
    }
    const available = input.available === 'true';
    return this.uow.run(async () => {
      const zone = await this.catalog.setZoneAvailable(input.zoneId, available);
      if (!zone) throw notFound(`Zone ${input.zoneId} not found`);
      await this.audit.record({ orgId: null, actorType: 'system', actorId: null, action: 'catalog.zone_set', targetId: zone.id, targetType: 'zone', ipAddress: null, data: { available } });
      return zone;
    });
  }
}

/**
 * Operator CLI `region:capacity`: sets the disk capacity shared by premium and ssd, never below
 * what the region's live volumes use (conflict). Stock (in_stock) is read at every request from
 * this and the region's used_gb counter, never cached.
 */
@Injectable()
export class SetRegionCapacity {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly catalog: Catalog,
    private readonly audit: AuditTrail,
  ) {}

  async execute(input: { regionId: string; gb: string }): Promise<{ id: string; name: string; capacityGb: number }> {
    if (!/^\d{1,16}$/.test(input.gb) || Number(input.gb) > MAX_CAPACITY_GB) {
      throw invalidRequest('gb must be a whole number of GB, 0 or more', { field: 'gb' });
    }
    const capacityGb = Number(input.gb);
    return this.uow.run(async () => {
      const region = await this.catalog.setRegionCapacity(input.regionId, capacityGb);
      if (!region) throw notFound(`Region ${input.regionId} not found`);
      await this.audit.record({ orgId: null, actorType: 'system', actorId: null, action: 'catalog.region_capacity_set', targetId: region.id, targetType: 'region', ipAddress: null, data: { capacity_gb: capacityGb } });
      return region;
    });
  }
}

/**
 * Operator CLI `region:vcpus`: sets the vCPUs a region sells servers from, never below the vCPUs of
 * its servers not deleted (conflict). server-options reads it at every request.
 */
@Injectable()
export class SetRegionVcpus {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly catalog: Catalog,
    private readonly audit: AuditTrail,
  ) {}

  async execute(input: { regionId: string; vcpus: string }): Promise<{ id: string; name: string; vcpuCapacity: number; vcpusUsed: number }> {
    if (!/^\d{1,16}$/.test(input.vcpus) || Number(input.vcpus) > MAX_CAPACITY_GB) {
      throw invalidRequest('vcpus must be a whole number of vCPUs, 0 or more', { field: 'vcpus' });
    }
    const vcpus = Number(input.vcpus);
    return this.uow.run(async () => {
      const region = await this.catalog.setRegionVcpus(input.regionId, vcpus);
      if (!region) throw notFound(`Region ${input.regionId} not found`);
      await this.audit.record({ orgId: null, actorType: 'system', actorId: null, action: 'catalog.region_vcpus_set', targetId: region.id, targetType: 'region', ipAddress: null, data: { vcpu_capacity: vcpus } });
      return region;
    });
  }
}

/**
 * Operator CLI `purchases:pause` and `purchases:resume`: the global switch (no region) or one
 * region's. A server purchase reads both switches in its transaction; disks are unaffected.
 */
@Injectable()
export class SetPurchasesPaused {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly catalog: Catalog,
    private readonly audit: AuditTrail,
  ) {}

  async execute(input: { regionId: string | null; paused: boolean }): Promise<PurchaseSwitches> {
    return this.uow.run(async () => {
      const switches = await this.catalog.setPurchasesPaused(input.regionId, input.paused);
      if (!switches) throw notFound(`Region ${input.regionId} not found`);
      await this.audit.record({
        orgId: null,
        actorType: 'system',
        actorId: null,
        action: input.paused ? 'catalog.purchases_paused' : 'catalog.purchases_resumed',
        targetId: input.regionId ?? 'global',
        targetType: input.regionId === null ? 'global' : 'region',
        ipAddress: null,
        data: { region: input.regionId },
      });
      return switches;
    });
  }
}
