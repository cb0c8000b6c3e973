import { ApiExtraModels, ApiProperty, ApiSchema, getSchemaPath } from '@nestjs/swagger';
import { PricePerGbMonthSchema } from '../../../../shared/http/openapi';
import { RENEWAL_TERMS } from '../../../prepaid/domain/term';
import { BillingResponse } from '../../../prepaid/interface/http/prepaid.openapi';
import { OperationResponse } from '../../../operations/interface/http/operations.openapi';
import { IMAGE_STATUSES } from '../../domain/image';

@ApiSchema({ name: 'ImageAutoRenew', description: 'Automatic renewal of an image: when enabled, it is renewed from the wallet when its term ends' })
export class ImageAutoRenewResponse {
  @ApiProperty({ example: false })
  enabled: boolean;

  @ApiProperty({ type: 'integer', enum: [...RENEWAL_TERMS, null], nullable: true, description: "The term each automatic renewal buys; null: the image's own term_months", example: null })
  term_months: number | null;
}

@ApiSchema({
  name: 'Image',
  description:
    "An organization's server image (type snapshot): a copy of a server's boot disk, prepaid for a term at the region's snapshot price per GB-month " +
    "times disk_gb; it outlives its server, and POST /v1/servers and rebuild take its id as `image` in its region",
})
export class ImageResponse {
  @ApiProperty({ example: 'img_8fKq2LmX9vR4tW7yZ3bN5cHd' })
  id: string;

  @ApiProperty({ example: 'web-golden' })
  name: string;

  @ApiProperty({ enum: ['snapshot'], example: 'snapshot' })
  type: string;

  @ApiProperty({ enum: IMAGE_STATUSES, example: 'available' })
  status: string;

  @ApiProperty({ description: 'The server it copies (which may have been deleted since)', example: 'vm_8fKq2LmX9vR4tW7yZ3bN5cHd' })
  from_server_id: string;

  @ApiProperty({ example: 'id-jkt' })
  region: string;

  @ApiProperty({ type: 'integer', description: "The server's boot disk when it was taken: a server made from it needs a plan with a disk_gb at least this", example: 40 })
  disk_gb: number;

  @ApiProperty({ type: String, nullable: true, description: 'The image the server was installed from', example: 'ubuntu-24.04' })
  os: string | null;

  @ApiProperty({ type: 'integer', enum: RENEWAL_TERMS, example: 1 })
  term_months: number;

  @ApiProperty({ type: () => BillingResponse })
  billing: BillingResponse;

  @ApiProperty({ type: () => PricePerGbMonthSchema, description: "The region's snapshot price when it was bought, frozen for its renewals" })
  price_per_gb_month: PricePerGbMonthSchema;

  @ApiProperty({ format: 'date-time', description: 'End of the paid term (recomputed when the image is ready)', example: '2026-12-23T10:00:00.000Z' })
  expires_at: string;

  @ApiProperty({ type: () => ImageAutoRenewResponse })
  auto_renew: ImageAutoRenewResponse;

  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, example: { role: 'web' } })
  labels: Record<string, string>;

  @ApiProperty({ format: 'date-time', example: '2026-11-23T10:00:00.000Z' })
  created_at: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'Set while suspended (its term ended)', example: null })
  suspended_at: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'When a suspended image is deleted unless renewed', example: null })
  release_at: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: null })
  deleted_at: string | null;

  @ApiProperty({ type: String, enum: ['customer', 'expired', 'purchase_failed', null], nullable: true, example: null })
  deleted_reason: string | null;
}

@ApiSchema({ name: 'CatalogImage', description: 'An image of the catalog (system or app), usable in every region that sells servers' })
export class CatalogImageResponse {
  @ApiProperty({ example: 'ubuntu-24.04' })
  id: string;

  @ApiProperty({ example: 'Ubuntu 24.04' })
  name: string;

  @ApiProperty({ enum: ['system', 'app'], example: 'system' })
  type: string;
}

@ApiExtraModels(CatalogImageResponse, ImageResponse)
@ApiSchema({ name: 'ImageList' })
export class ImageListResponse {
  @ApiProperty({
    type: 'array',
    items: { oneOf: [{ $ref: getSchemaPath(CatalogImageResponse) }, { $ref: getSchemaPath(ImageResponse) }] },
    description: "Newest first: the catalog's images (CatalogImage, type system or app) and the organization's own (Image, type snapshot)",
  })
  images: (CatalogImageResponse | ImageResponse)[];

  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for the next page; null on the last page', example: null })
  next_cursor: string | null;
}

@ApiSchema({ name: 'ImageAction', description: 'The action accepted: the image as it is now, and the operation to poll (also in Location)' })
export class ImageActionResponse {
  @ApiProperty({ type: () => ImageResponse })
  image: ImageResponse;

  @ApiProperty({ type: () => OperationResponse })
  operation: OperationResponse;
}
