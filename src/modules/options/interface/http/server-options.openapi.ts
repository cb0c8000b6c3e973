import { ApiProperty, ApiSchema } from '@nestjs/swagger';

/** Response body of GET /v1/server-options, for the OpenAPI document (examples: seeds/demo.json). */

@ApiSchema({ name: 'PricePerMonth', description: 'Price per month: USD with five decimals, IDR whole rupiah; strings' })
export class PricePerMonthSchema {
  @ApiProperty({ example: '4.50000' })
  USD: string;

  @ApiProperty({ example: '72000' })
  IDR: string;
}

@ApiSchema({ name: 'ServerZoneOption' })
export class ServerZoneOptionResponse {
  @ApiProperty({ example: 'id-jkt-a' })
  id: string;

  @ApiProperty({ description: 'The zone accepts new servers (and disks)', example: true })
  available: boolean;
}

@ApiSchema({ name: 'ServerPlanOption', description: 'A plan sold in the region, with its monthly price' })
export class ServerPlanOptionResponse {
  @ApiProperty({ example: 'cx1' })
  id: string;

  @ApiProperty({ type: 'integer', example: 1 })
  vcpus: number;

  @ApiProperty({ type: 'integer', example: 2 })
  memory_gb: number;

  @ApiProperty({ type: 'integer', description: 'The boot disk (not counted in disk capacity)', example: 40 })
  disk_gb: number;

  @ApiProperty({ type: () => PricePerMonthSchema })
  price_per_month: PricePerMonthSchema;

  @ApiProperty({ description: "The plan's vCPUs fit the region's free vCPUs", example: true })
  in_stock: boolean;
}

@ApiSchema({ name: 'ImageOption', description: 'An image servers can be created from' })
export class ImageOptionResponse {
  @ApiProperty({ example: 'ubuntu-24.04' })
  id: string;

  @ApiProperty({ example: 'Ubuntu 24.04' })
  name: string;

  @ApiProperty({ enum: ['system', 'app'], example: 'system' })
  type: string;
}

@ApiSchema({ name: 'ServerOptions', description: 'Server purchase options of one region, read at every request (never cached)' })
export class ServerOptionsResponse {
  @ApiProperty({ example: 'id-jkt' })
  region: string;

  @ApiProperty({ description: 'At least one plan is in stock', example: true })
  in_stock: boolean;

  @ApiProperty({ description: "New server purchases are paused (the region's switch or the global one): POST /v1/servers answers 503 purchases_paused", example: false })
  purchases_paused: boolean;

  @ApiProperty({ type: 'integer', isArray: true, description: 'Allowed terms in months, ascending', example: [1, 3, 12] })
  terms: number[];

  @ApiProperty({ type: () => [ServerZoneOptionResponse], description: 'The zones, by id' })
  zones: ServerZoneOptionResponse[];

  @ApiProperty({ type: () => [ServerPlanOptionResponse], description: 'The plans sold here, by vcpus, memory_gb, id' })
  plans: ServerPlanOptionResponse[];

  @ApiProperty({ type: () => [ImageOptionResponse], description: 'The images, by id' })
  images: ImageOptionResponse[];
}
