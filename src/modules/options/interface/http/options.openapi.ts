import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { VolumeType } from '../../domain/catalog';
import { PricePerGbMonthSchema, ServerRefSchema, nullableRef } from '../../../../shared/http/openapi';
import { PricePerMonthSchema } from './server-options.openapi';

/** Response bodies of GET /v1/volume-options and GET /v1/regions, for the OpenAPI document (examples: seeds/demo.json). */

@ApiSchema({ name: 'ZoneOptions' })
export class ZoneOptionsResponse {
  @ApiProperty({ example: 'id-jkt-a' })
  id: string;

  @ApiProperty({ description: 'The zone accepts new disks', example: true })
  available: boolean;

  @ApiProperty({
    type: () => [ServerRefSchema],
    description: "The caller's servers in this zone that can take one more data disk (may be empty)",
    example: [{ id: 'vm_demoweb1', name: 'web-1' }],
  })
  servers: ServerRefSchema[];
}

@ApiSchema({ name: 'VolumeOptions', description: 'Disk purchase options of one region and type (interface.md 2.4)' })
export class VolumeOptionsResponse {
  @ApiProperty({ example: 'id-jkt' })
  region: string;

  @ApiProperty({ enum: ['premium', 'ssd'], example: 'premium' })
  type: string;

  @ApiProperty({ description: "False when the region's free capacity (shared by premium and ssd) is below min_gb", example: true })
  in_stock: boolean;

  @ApiProperty({ type: 'integer', example: 10 })
  min_gb: number;

  @ApiProperty({ type: 'integer', example: 4000 })
  max_gb: number;

  @ApiProperty({ type: 'integer', example: 10 })
  step_gb: number;

  @ApiProperty({ type: 'integer', isArray: true, description: 'Allowed terms in months', example: [1, 3, 12] })
  terms: number[];

  @ApiProperty({ type: 'integer', description: 'Most data disks one server can hold', example: 8 })
  per_server_limit: number;

  @ApiProperty({ type: () => PricePerGbMonthSchema })
  price_per_gb_month: PricePerGbMonthSchema;

  @ApiProperty({ type: () => [ZoneOptionsResponse] })
  zones: ZoneOptionsResponse[];
}

@ApiSchema({ name: 'Zone' })
export class ZoneResponse {
  @ApiProperty({ example: 'id-jkt-a' })
  id: string;

  @ApiProperty({ example: true })
  available: boolean;
}

@ApiSchema({ name: 'Region' })
export class RegionResponse {
  @ApiProperty({ example: 'id-jkt' })
  id: string;

  @ApiProperty({ example: 'Jakarta' })
  name: string;

  @ApiProperty({
    enum: ['premium', 'ssd'],
    isArray: true,
    description: 'The disk types the region sells (GET /v1/volume-options?type= answers for these), in alphabetical order; empty when it sells none',
    example: ['premium', 'ssd'],
  })
  volume_types: VolumeType[];

  @ApiProperty({
    type: () => [ZoneResponse],
    example: [
      { id: 'id-jkt-a', available: true },
      { id: 'id-jkt-b', available: true },
      { id: 'id-jkt-c', available: false },
    ],
  })
  zones: ZoneResponse[];

  @ApiProperty({ ...nullableRef(PricePerGbMonthSchema), description: 'The price of a snapshot per GB of its disk and month (POST /v1/volumes/{id}/snapshots), and of a server image per GB of its boot disk and month (POST /v1/servers/{id}/images); null when the region sells neither' })
  snapshot_price_per_gb_month: PricePerGbMonthSchema | null;

  @ApiProperty({ ...nullableRef(PricePerMonthSchema), description: 'The monthly price of a reserved IPv4 address (POST /v1/reserved-ips); null when the region sells none' })
  reserved_ipv4_price_per_month: PricePerMonthSchema | null;
}

@ApiSchema({ name: 'RegionList' })
export class RegionsResponse {
  @ApiProperty({ type: () => [RegionResponse], description: 'Every region, by id' })
  regions: RegionResponse[];
}
