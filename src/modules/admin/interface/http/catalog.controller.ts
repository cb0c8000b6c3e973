import { Body, Controller, Get, Param, Patch, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiProperty, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { Allow, IsBoolean, IsDefined, IsInt, IsOptional, Min } from 'class-validator';
import type { Request, Response } from 'express';
import { formatPricePair } from '../../../../shared/kernel/money/money';
import { IdempotentExecution } from '../../../idempotency/application/idempotent-execution';
import { jsonResponse, sendOutcome, storableErrors } from '../../../idempotency/interface/http/idempotent-request';
import {
  ListRegionDetails, SetRegionPrices, SetZoneAvailability, UpdateRegion, regionState,
} from '../../../options/application/catalog-admin.use-cases';
import { RegionDetail } from '../../../options/domain/catalog';
import { ALL_STAFF, OPERATOR, StaffPrincipal } from '../../domain/staff';
import { adminIdempotencyScope } from './admin-idempotency';
import { AdminController, AdminRoute, CurrentStaff, auditChanges, auditTarget } from './admin.decorators';

type Staff = StaffPrincipal & { justification: string | null };

export function presentRegionDetail(r: RegionDetail) {
  return {
    id: r.id,
    name: r.name,
    disk_capacity_gb: r.diskCapacityGb,
    disk_used_gb: r.diskUsedGb,
    vcpu_capacity: r.vcpuCapacity,
    vcpus_used: r.vcpusUsed,
    purchases_paused: r.purchasesPaused,
    zones: r.zones.map((z) => ({ id: z.id, available: z.available })),
    prices: {
      volumes: Object.fromEntries(r.volumePrices.map((v) => [v.type, formatPricePair(v.price)])),
      plans: Object.fromEntries(r.planPrices.map((p) => [p.planId, formatPricePair(p.price)])),
      reserved_ipv4: r.reservedIpv4Price && formatPricePair(r.reservedIpv4Price),
    },
    ipv6_prefix: r.ipv6Prefix,
    ipv6_subnets_used: r.ipv6SubnetsUsed,
    reserved_ipv4_pool: { addresses: r.reservedIpv4Pool.addresses, held: r.reservedIpv4Pool.held },
  };
}

// JSON types at the edge (the CLI's use cases also take its strings); ranges and use in the use cases.
const DISK = 'disk_capacity_gb must be a whole number of GB, 0 or more';
const VCPUS = 'vcpu_capacity must be a whole number of vCPUs, 0 or more';

export class UpdateRegionDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 0, description: 'Disk capacity in GB, shared by premium and ssd; below what live volumes use: 409 conflict', example: 20000 })
  @IsOptional() @IsInt({ message: DISK }) @Min(0, { message: DISK }) disk_capacity_gb?: number;
  @ApiPropertyOptional({ type: 'integer', minimum: 0, description: 'vCPUs servers are sold from; below the vCPUs of servers not deleted: 409 conflict', example: 256 })
  @IsOptional() @IsInt({ message: VCPUS }) @Min(0, { message: VCPUS }) vcpu_capacity?: number;
  @ApiPropertyOptional({ type: 'boolean', description: 'Refuse new server purchases in the region (503 purchases_paused); disks and renewals are unaffected', example: true })
  @IsOptional() @IsBoolean({ message: 'purchases_paused must be true or false' }) purchases_paused?: boolean;
  @ApiPropertyOptional({
    type: 'string',
    description: "The region's IPv6 /48, given as its network address: servers created afterwards get /64s of it. Another region's: 409 conflict " +
      '(`details.existing_id`); while live servers of the region hold addresses of the current prefix: 409 conflict (`details.in_use`)',
    example: '2001:db8:20::/48',
  })
  @Allow() ipv6_prefix?: string;
  @ApiPropertyOptional({
    type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 100,
    description: 'IPv4 blocks in CIDR form (each at its first address, not overlapping) whose every address joins the region\'s pool of reservable addresses; ' +
      "an address a pool holds already: 409 conflict naming its block (`details.field`, `details.existing_id` the region); at most 65536 addresses a region",
    example: ['203.0.113.0/28'],
  })
  @Allow() reserved_ipv4_pool_add?: string[];
}

export class UpdateZoneDto {
  @ApiProperty({ type: 'boolean', description: 'Whether the zone takes new disks and servers', example: false })
  @IsBoolean({ message: 'available must be true or false' }) @IsDefined({ message: 'available must be true or false' }) available: boolean;
}

const PRICE_PAIRS = {
  type: 'object' as const,
  additionalProperties: {
    type: 'object' as const,
    required: ['USD', 'IDR'],
    properties: { USD: { type: 'string' as const, example: '0.12000' }, IDR: { type: 'string' as const, example: '1900' } },
  },
};

export class SetRegionPricesDto {
  @ApiPropertyOptional({ ...PRICE_PAIRS, description: 'Per disk type (premium, ssd): the price per GB per month', example: { premium: { USD: '0.12', IDR: '1900' } } })
  @Allow() volumes?: Record<string, { USD: string; IDR: string }>;
  @ApiPropertyOptional({ ...PRICE_PAIRS, description: 'Per server plan the region sells: the price per month', example: { cx1: { USD: '6.50', IDR: '99000' } } })
  @Allow() plans?: Record<string, { USD: string; IDR: string }>;
  @ApiPropertyOptional({
    type: 'object', required: ['USD', 'IDR'], properties: { USD: { type: 'string', example: '1.00000' }, IDR: { type: 'string', example: '16000' } },
    description: "A reserved IPv4 address's price per month; the region's pool must hold addresses (else 400 naming reserved_ipv4)",
    example: { USD: '1.50', IDR: '24000' },
  })
  @Allow() reserved_ipv4?: { USD: string; IDR: string };
}

/**
 * The catalog for operators (admin.md "Catalog, capacity and purchases"): each write runs the
 * operator CLI's own use case (zone:set, region:capacity, region:vcpus, purchases:pause|resume)
 * by actor staff, and the staff audit keeps the state before and after.
 */
@ApiTags('Catalog')
@AdminController()
@Controller('admin/v1')
export class AdminCatalogController {
  constructor(
    private readonly listRegions: ListRegionDetails,
    private readonly updateRegion: UpdateRegion,
    private readonly setZone: SetZoneAvailability,
    private readonly setPrices: SetRegionPrices,
    private readonly idempotent: IdempotentExecution,
  ) {}

  @Get('regions')
  @AdminRoute({ roles: ALL_STAFF })
  @ApiOperation({ operationId: 'listAdminRegions', summary: 'Every region: capacity and use, the purchase switch, zones, prices, IPv6 prefix and reserved IPv4 pool' })
  async list(): Promise<unknown> {
    const { regions, globalPurchasesPaused } = await this.listRegions.execute();
    return { regions: regions.map(presentRegionDetail), global_purchases_paused: globalPurchasesPaused };
  }

  @Patch('regions/:id')
  @AdminRoute({ roles: OPERATOR })
  @ApiOperation({
    operationId: 'updateRegion',
    summary: "Set a region's disk capacity, vCPU capacity, purchase switch, IPv6 prefix, or add to its reserved IPv4 pool",
    description: 'Operator. All members given are changed in one transaction, or none. A capacity below what is in use: 409 conflict naming the member (`details.field`, `details.in_use`). ' +
      'An IPv6 prefix another region has, or a pool address a pool holds already: 409 conflict naming the member.',
  })
  async update(@Param('id') id: string, @Body() body: UpdateRegionDto, @CurrentStaff() staff: Staff, @Req() req: Request, @Res() res: Response): Promise<void> {
    await this.write(req, res, async () => {
      const { before, after } = await this.updateRegion.execute(id, body, { type: 'staff', role: staff.role });
      auditTarget(req, { targetType: 'region', targetId: id });
      auditChanges(req, { before: regionState(before), after: regionState(after) });
      return { region: presentRegionDetail(after) };
    });
  }

  @Patch('zones/:id')
  @AdminRoute({ roles: OPERATOR })
  @ApiOperation({ operationId: 'updateZone', summary: 'Open or close a zone to new disks and servers' })
  async zone(@Param('id') id: string, @Body() body: UpdateZoneDto, @CurrentStaff() staff: Staff, @Req() req: Request, @Res() res: Response): Promise<void> {
    await this.write(req, res, async () => {
      const { zone, wasAvailable } = await this.setZone.change({ zoneId: id, available: body.available }, { type: 'staff', role: staff.role });
      auditTarget(req, { targetType: 'zone', targetId: id });
      auditChanges(req, { before: { available: wasAvailable }, after: { available: zone.available } });
      return { zone: { id: zone.id, region: zone.regionId, available: zone.available } };
    });
  }

  @Patch('regions/:id/prices')
  @AdminRoute({ roles: OPERATOR })
  @ApiOperation({
    operationId: 'setRegionPrices',
    summary: "Set a region's prices for new quotes and purchases",
    description: 'Operator. A bought resource keeps the price frozen on it (its renewals too), and a quote keeps its own. The staff audit keeps the old and new prices. ' +
      "`reserved_ipv4` sets a reserved IPv4 address's monthly price (the region then sells them; its pool must hold addresses).",
  })
  async prices(@Param('id') id: string, @Body() body: SetRegionPricesDto, @CurrentStaff() staff: Staff, @Req() req: Request, @Res() res: Response): Promise<void> {
    await this.write(req, res, async () => {
      const { before, after, region } = await this.setPrices.execute(id, body, { type: 'staff', role: staff.role });
      auditTarget(req, { targetType: 'region', targetId: id });
      auditChanges(req, { before, after });
      return { region: presentRegionDetail(region) };
    });
  }

  /** A change, at most once per Idempotency-Key. */
  private async write(req: Request, res: Response, change: () => Promise<unknown>): Promise<void> {
    const outcome = await this.idempotent.run(adminIdempotencyScope(req), async () => jsonResponse(200, await change()), storableErrors(req, ['not_found', 'conflict']));
    sendOutcome(res, outcome);
  }
}
