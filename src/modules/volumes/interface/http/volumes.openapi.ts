import { ApiExtraModels, ApiProperty, ApiSchema } from '@nestjs/swagger';
import { PricePerGbMonthSchema, ServerRefSchema, nullableRef, unionSchema } from '../../../../shared/http/openapi';
import { PricePerMonthSchema } from '../../../options/interface/http/server-options.openapi';
import { CURRENCIES } from '../../../../shared/kernel/money/money';
import { OperationResponse } from '../../../operations/interface/http/operations.openapi';
import { AutoRenewResponse, BillingResponse } from '../../../prepaid/interface/http/prepaid.openapi';
import { VOLUME_TYPES } from '../../../options/domain/catalog';
import { VOLUME_STATUSES } from '../../domain/volume';
import { RENEWAL_TERMS } from '../../../prepaid/domain/term';
import { MAX_LABELS, MAX_LABEL_VALUE_LENGTH } from '../../../prepaid/domain/labels';

/** The Volume of interface.md 2.1 and the renewal answer, for the OpenAPI document (examples: vol_demodata1 of seeds/demo.json). */

@ApiExtraModels(ServerRefSchema)
@ApiSchema({ name: 'Volume', description: 'A block disk' })
export class VolumeResponse {
  @ApiProperty({ example: 'vol_demodata1' })
  id: string;

  @ApiProperty({ example: 'data-1' })
  name: string;

  @ApiProperty({ enum: VOLUME_STATUSES, description: 'attached when on a server, available when detached', example: 'attached' })
  status: string;

  @ApiProperty({ enum: ['premium', 'ssd'], example: 'premium' })
  type: string;

  @ApiProperty({ example: 'id-jkt' })
  region: string;

  @ApiProperty({ example: 'id-jkt-a' })
  zone: string;

  @ApiProperty({ type: 'integer', example: 100 })
  size_gb: number;

  @ApiProperty({ ...nullableRef(ServerRefSchema), description: 'The server the disk is on; null when detached' })
  server: ServerRefSchema | null;

  @ApiProperty({ type: String, nullable: true, description: 'Null when detached', example: '/mnt/data' })
  mount_path: string | null;

  @ApiProperty({ description: 'False when detached', example: true })
  mounted: boolean;

  @ApiProperty({ enum: RENEWAL_TERMS, type: 'integer', description: 'Current billing term in months', example: 1 })
  term_months: number;

  @ApiProperty({ type: () => BillingResponse })
  billing: BillingResponse;

  @ApiProperty({ type: () => PricePerGbMonthSchema, description: 'The price the disk was bought at (renewals use it)' })
  price_per_gb_month: PricePerGbMonthSchema;

  @ApiProperty({ format: 'date-time', example: '2026-12-21T00:00:00.000Z' })
  expires_at: string;

  @ApiProperty({ type: () => AutoRenewResponse })
  auto_renew: AutoRenewResponse;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'When its term ended and it was suspended; null unless suspended', example: null })
  suspended_at: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'When it is released (deleted) unless renewed: suspended_at + the retention; null unless suspended', example: null })
  release_at: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'The server its suspension detached it from; null otherwise', example: null })
  previous_server_id: string | null;

  @ApiProperty({ type: String, nullable: true, example: null })
  note: string | null;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string', maxLength: MAX_LABEL_VALUE_LENGTH },
    maxProperties: MAX_LABELS,
    description: 'Key/value labels; {} when none',
    example: { env: 'prod' },
  })
  labels: Record<string, string>;

  @ApiProperty({ description: 'While true, DELETE is refused (409 invalid_state)', example: false })
  delete_protection: boolean;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T10:00:00.000Z' })
  created_at: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: null })
  deleted_at: string | null;

  @ApiProperty({ type: String, enum: ['customer', 'expired', 'purchase_failed', null], nullable: true, description: 'Why it was deleted: its owner, its term ended unrenewed, its purchase failed; null while live', example: null })
  deleted_reason: string | null;
}

@ApiSchema({ name: 'VolumeList' })
export class VolumeListResponse {
  @ApiProperty({ type: () => [VolumeResponse], description: 'Volumes passing the filters (without status: not deleted), newest first' })
  volumes: VolumeResponse[];

  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for the next page; null on the last page', example: null })
  next_cursor: string | null;
}

@ApiSchema({ name: 'Renewal', description: 'The renewal accepted: the volume, and the volume.renew operation to poll' })
export class RenewVolumeResponse {
  @ApiProperty({ type: () => VolumeResponse })
  volume: VolumeResponse;

  @ApiProperty({ type: () => OperationResponse })
  operation: OperationResponse;
}

@ApiSchema({ name: 'VolumeQuote', description: 'A disk price locked for 10 minutes; a disk purchase with quote_id pays it' })
export class VolumeQuoteResponse {
  @ApiProperty({ enum: ['volume'], description: 'A disk quote', example: 'volume' })
  kind: string;

  @ApiProperty({ example: 'quo_4Lm9xQ2vR7tW1yZ3bN5cHd8K' })
  id: string;

  @ApiProperty({ example: 'id-jkt' })
  region: string;

  @ApiProperty({ enum: VOLUME_TYPES, example: 'premium' })
  type: string;

  @ApiProperty({ type: 'integer', example: 100 })
  size_gb: number;

  @ApiProperty({ enum: RENEWAL_TERMS, type: 'integer', example: 12 })
  term_months: number;

  @ApiProperty({ enum: CURRENCIES, example: 'USD' })
  currency: string;

  @ApiProperty({ type: () => PricePerGbMonthSchema, description: 'The offer\'s price when the quote was made, in both currencies' })
  price_per_gb_month: PricePerGbMonthSchema;

  @ApiProperty({ description: 'size_gb × price_per_gb_month[currency] × term_months, in currency (USD five decimals, IDR whole rupiah)', example: '24.00000' })
  amount: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-23T10:00:00.000Z' })
  created_at: string;

  @ApiProperty({ format: 'date-time', description: 'created_at + 10 minutes; a purchase after it is 409 quote_expired', example: '2026-11-23T10:10:00.000Z' })
  expires_at: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'When a purchase used it; null until then', example: null })
  used_at: string | null;
}

@ApiExtraModels(PricePerMonthSchema)
@ApiSchema({ name: 'ServerQuote', description: "A server's price locked for 10 minutes; a server purchase with quote_id pays it" })
export class ServerQuoteResponse {
  @ApiProperty({ example: 'quo_4Lm9xQ2vR7tW1yZ3bN5cHd8K' })
  id: string;

  @ApiProperty({ enum: ['server'], description: 'A server quote', example: 'server' })
  kind: string;

  @ApiProperty({ example: 'id-jkt' })
  region: string;

  @ApiProperty({ example: 'cx1' })
  plan: string;

  @ApiProperty({ enum: RENEWAL_TERMS, type: 'integer', example: 1 })
  term_months: number;

  @ApiProperty({ enum: CURRENCIES, example: 'USD' })
  currency: string;

  @ApiProperty({ type: () => PricePerMonthSchema, description: "The plan's monthly price when the quote was made, in both currencies" })
  price_per_month: PricePerMonthSchema;

  @ApiProperty({ description: 'price_per_month[currency] × term_months, in currency (USD five decimals, IDR whole rupiah)', example: '4.50000' })
  amount: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-23T10:00:00.000Z' })
  created_at: string;

  @ApiProperty({ format: 'date-time', description: 'created_at + 10 minutes; a purchase after it is 409 quote_expired', example: '2026-11-23T10:10:00.000Z' })
  expires_at: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'When a purchase used it; null until then', example: null })
  used_at: string | null;
}

/** The Quote: a disk quote or a server quote, told apart by `kind`. */
@ApiExtraModels(VolumeQuoteResponse, ServerQuoteResponse)
@ApiSchema({ name: 'Quote', description: 'A price locked for 10 minutes for one order; a purchase with quote_id pays it' })
export class QuoteResponse {
  @ApiProperty({ example: 'quo_4Lm9xQ2vR7tW1yZ3bN5cHd8K' })
  id: string;
}
unionSchema('Quote', 'A price locked for 10 minutes for one order (kind volume: a disk; kind server: a server); a purchase with quote_id pays it', [VolumeQuoteResponse, ServerQuoteResponse]);

@ApiSchema({ name: 'VolumeAction', description: 'The action accepted: the volume as it is now, and the operation to poll (also in Location)' })
export class VolumeActionResponse {
  @ApiProperty({ type: () => VolumeResponse })
  volume: VolumeResponse;

  @ApiProperty({ type: () => OperationResponse })
  operation: OperationResponse;
}
