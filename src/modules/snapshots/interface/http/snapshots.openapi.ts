import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { PricePerGbMonthSchema } from '../../../../shared/http/openapi';
import { RENEWAL_TERMS } from '../../../prepaid/domain/term';
import { BillingResponse } from '../../../prepaid/interface/http/prepaid.openapi';
import { OperationResponse } from '../../../operations/interface/http/operations.openapi';
import { SNAPSHOT_STATUSES } from '../../domain/snapshot';

@ApiSchema({ name: 'SnapshotAutoRenew', description: "Automatic renewal of a snapshot: when enabled, it is renewed from the wallet when its term ends" })
export class SnapshotAutoRenewResponse {
  @ApiProperty({ example: false })
  enabled: boolean;

  @ApiProperty({ type: 'integer', enum: [...RENEWAL_TERMS, null], nullable: true, description: "The term each automatic renewal buys; null: the snapshot's own term_months", example: null })
  term_months: number | null;
}

@ApiSchema({ name: 'Snapshot', description: "A point-in-time copy of a disk, prepaid for a term; it outlives its disk and is restored as a new disk (POST /v1/volumes with snapshot_id)" })
export class SnapshotResponse {
  @ApiProperty({ example: 'snap_8fKq2LmX9vR4tW7yZ3bN5cHd' })
  id: string;

  @ApiProperty({ example: 'before-upgrade' })
  name: string;

  @ApiProperty({ enum: SNAPSHOT_STATUSES, example: 'available' })
  status: string;

  @ApiProperty({ description: 'The disk it copies (which may have been deleted since)', example: 'vol_demodata1' })
  volume_id: string;

  @ApiProperty({ example: 'id-jkt' })
  region: string;

  @ApiProperty({ type: 'integer', description: "The disk's size when it was taken", example: 100 })
  size_gb: number;

  @ApiProperty({ description: "The disk's type", example: 'premium' })
  type: string;

  @ApiProperty({ type: 'integer', enum: RENEWAL_TERMS, example: 1 })
  term_months: number;

  @ApiProperty({ type: () => BillingResponse })
  billing: BillingResponse;

  @ApiProperty({ type: () => PricePerGbMonthSchema, description: "The region's snapshot price when it was bought, frozen for its renewals" })
  price_per_gb_month: PricePerGbMonthSchema;

  @ApiProperty({ format: 'date-time', description: 'End of the paid term (recomputed when the snapshot is ready)', example: '2026-12-23T10:00:00.000Z' })
  expires_at: string;

  @ApiProperty({ type: () => SnapshotAutoRenewResponse })
  auto_renew: SnapshotAutoRenewResponse;

  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, example: { env: 'prod' } })
  labels: Record<string, string>;

  @ApiProperty({ format: 'date-time', example: '2026-11-23T10:00:00.000Z' })
  created_at: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'Set while suspended (its term ended)', example: null })
  suspended_at: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'When a suspended snapshot is deleted unless renewed', example: null })
  release_at: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: null })
  deleted_at: string | null;

  @ApiProperty({ type: String, enum: ['customer', 'expired', 'purchase_failed', null], nullable: true, example: null })
  deleted_reason: string | null;
}

@ApiSchema({ name: 'SnapshotList' })
export class SnapshotListResponse {
  @ApiProperty({ type: () => [SnapshotResponse], description: 'Newest first' })
  snapshots: SnapshotResponse[];

  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for the next page; null on the last page', example: null })
  next_cursor: string | null;
}

@ApiSchema({ name: 'SnapshotAction', description: 'The action accepted: the snapshot as it is now, and the operation to poll (also in Location)' })
export class SnapshotActionResponse {
  @ApiProperty({ type: () => SnapshotResponse })
  snapshot: SnapshotResponse;

  @ApiProperty({ type: () => OperationResponse })
  operation: OperationResponse;
}
