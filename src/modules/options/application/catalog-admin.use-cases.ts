import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { invalidRequest, notFound } from '../../../shared/kernel/errors/domain-error';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { Zone } from '../domain/catalog';
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
