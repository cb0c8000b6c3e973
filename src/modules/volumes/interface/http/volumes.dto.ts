import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsDefined, IsIn, IsInt, IsNotEmpty, IsOptional, IsString, Matches, MaxLength, ValidateIf } from 'class-validator';
import { Currency } from '../../../../shared/kernel/money/money';
import { VOLUME_TYPES, VolumeType } from '../../../options/domain/catalog';
import { VOLUME_STATUSES, VolumeStatus } from '../../domain/volume';
import { TermMonths } from '../../../prepaid/domain/term';
import { MAX_MOUNT_PATH_LENGTH, MOUNT_PATH_RULE } from '../../domain/volume-actions';
import { MAX_NOTE_LENGTH, VOLUME_NAME_PATTERN, VOLUME_NAME_RULE } from '../../domain/volume-attributes';
import { LABEL_KEY_RULE } from '../../../prepaid/domain/labels';
import { DeleteProtectionMember, LabelsMember } from '../../../prepaid/interface/http/label-members';
import { AutoRenewMember } from '../../../prepaid/interface/http/auto-renew-member';
import { CurrencyMember, RenewalCurrencyMember, TermMonthsMember } from '../../../prepaid/interface/http/term-members';

/**
 * Body of POST /v1/volumes/{id}/renew. Unknown members are 400 naming them. class-validator runs a
 * property's checks bottom-up and stops at the first failure: the type check sits below the value check.
 */
export class RenewVolumeBody {
  @TermMonthsMember('Months to add', 3)
  term_months: TermMonths;

  @RenewalCurrencyMember('volume')
  currency?: Currency;
}

const single = (name: string) => `${name} must be given once, as a string`;

/** Query of GET /v1/volumes: pagination and filters (all that are given must match). Unknown parameters are ignored. */
export class ListVolumesQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Page size', example: 20 })
  @IsOptional() @IsString({ message: 'limit must be a whole number from 1 to 100' }) limit?: string;
  @ApiPropertyOptional({ description: 'The next_cursor of the previous page (a position in the newest-first order: with other filters, the listing goes on after it under those filters)' })
  @IsOptional() @IsString({ message: 'cursor must be the next_cursor of a previous page' }) cursor?: string;

  @ApiPropertyOptional({ description: 'Only volumes in this region', example: 'id-jkt' })
  @IsOptional() @IsNotEmpty({ message: 'region must not be empty' }) @IsString({ message: single('region') }) region?: string;

  @ApiPropertyOptional({ description: 'Only volumes in this zone', example: 'id-jkt-a' })
  @IsOptional() @IsNotEmpty({ message: 'zone must not be empty' }) @IsString({ message: single('zone') }) zone?: string;

  @ApiPropertyOptional({ enum: VOLUME_TYPES, description: 'Only volumes of this type' })
  @IsOptional() @IsIn(VOLUME_TYPES, { message: 'type must be premium or ssd' }) @IsString({ message: single('type') }) type?: VolumeType;

  @ApiPropertyOptional({ enum: VOLUME_STATUSES, description: 'Only volumes in this status; without it every status but deleted; deleted lists the deleted ones' })
  @IsOptional()
  @IsIn(VOLUME_STATUSES, { message: `status must be one of ${VOLUME_STATUSES.join(', ')}` })
  @IsString({ message: single('status') })
  status?: VolumeStatus;

  @ApiPropertyOptional({ description: 'Only volumes attached to this server', example: 'vm_demoweb1' })
  @IsOptional() @IsNotEmpty({ message: 'server_id must not be empty' }) @IsString({ message: single('server_id') }) server_id?: string;

  @ApiPropertyOptional({ description: 'Only the volume with this exact name', example: 'data-1' })
  @IsOptional()
  @Matches(VOLUME_NAME_PATTERN, { message: `name must be ${VOLUME_NAME_RULE}` })
  @IsString({ message: single('name') })
  name?: string;

  @ApiPropertyOptional({
    type: [String],
    description: `key=value (the value may be empty); repeat it for several labels, all of which must match. Keys: ${LABEL_KEY_RULE}`,
    example: ['env=prod'],
  })
  @IsOptional() @IsString({ each: true, message: 'label must be key=value' }) label?: string | string[];

  @ApiPropertyOptional({ enum: ['true', 'false'], description: 'Only volumes whose automatic renewal is on (true) or off (false)', example: 'true' })
  @IsOptional() @IsIn(['true', 'false'], { message: 'auto_renew must be true or false' }) @IsString({ message: single('auto_renew') }) auto_renew?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Only volumes whose expires_at is before this instant (ISO 8601 with a time zone, or a date: midnight UTC)', example: '2026-12-31T00:00:00Z' })
  @IsOptional() @IsString({ message: single('expires_before') }) expires_before?: string;
}

/** Body of PATCH /v1/volumes/{id}: every member optional; null is a wrong type except for note. */
export class UpdateVolumeBody {
  @ApiPropertyOptional({ description: `New name, unique among the organization's volumes not deleted: ${VOLUME_NAME_RULE}`, example: 'data-2' })
  @Matches(VOLUME_NAME_PATTERN, { message: `name must be ${VOLUME_NAME_RULE}` })
  @IsString({ message: `name must be a string: ${VOLUME_NAME_RULE}` })
  @ValidateIf((body: UpdateVolumeBody) => body.name !== undefined)
  name?: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: MAX_NOTE_LENGTH, description: 'Free text; null clears it', example: 'nightly backups' })
  @MaxLength(MAX_NOTE_LENGTH, { message: `note must be at most ${MAX_NOTE_LENGTH} characters` })
  @IsString({ message: 'note must be a string or null' })
  @ValidateIf((body: UpdateVolumeBody) => body.note !== undefined && body.note !== null)
  note?: string | null;

  @LabelsMember((rules) => `Replaces the whole map ({} removes every label). ${rules}`, { env: 'prod', team: 'data' })
  labels?: Record<string, string>;

  @DeleteProtectionMember('While true, DELETE is refused. Turning it off takes an admin or owner session, or an API key', true)
  delete_protection?: boolean;

  @AutoRenewMember('Turns automatic renewal on or off (allowed while suspended); term_months left out keeps the current one')
  auto_renew?: unknown;
}

/** Body of POST /v1/quotes: the members of a purchase the price depends on (a disk's, or with `plan` a server's). */
export class CreateQuoteBody {
  @ApiProperty({ description: 'A region id from GET /v1/regions', example: 'id-jkt' })
  @IsNotEmpty({ message: 'region must not be empty' })
  @IsString({ message: 'region must be a string' })
  @IsDefined({ message: 'region is required' })
  region: string;

  @ApiPropertyOptional({ enum: VOLUME_TYPES, default: 'premium', example: 'premium' })
  @IsIn(VOLUME_TYPES, { message: 'type must be premium or ssd' })
  @IsString({ message: 'type must be a string: premium or ssd' })
  @ValidateIf((body: CreateQuoteBody) => body.type !== undefined)
  type?: VolumeType;

  @ApiPropertyOptional({ type: 'integer', description: "A disk quote (required without plan): size in GB, from the offer's min_gb to max_gb, min_gb + k × step_gb", example: 100 })
  @IsInt({ message: 'size_gb must be a whole number of GB' })
  @IsDefined({ message: 'size_gb is required (or plan, for a server quote)' })
  @ValidateIf((body: CreateQuoteBody) => body.plan === undefined)
  size_gb: number;

  @ApiPropertyOptional({ description: 'A server quote: a plan sold in the region (type and size_gb are then refused)', example: 'cx1' })
  @IsNotEmpty({ message: 'plan must not be empty' })
  @IsString({ message: 'plan must be a string' })
  @ValidateIf((body: CreateQuoteBody) => body.plan !== undefined)
  plan?: string;

  @TermMonthsMember("Months; one of the offer's terms", 12)
  term_months: TermMonths;

  @CurrencyMember()
  currency: Currency;
}

/**
 * Body of POST /v1/volumes (lifecycle.md "Buying"). Unknown members are 400 naming them; the checks
 * that need the offer, the zones or the server (size grid, terms, places) are the use case's.
 */
export class PurchaseVolumeBody {
  @ApiProperty({ description: `Unique among the organization's volumes not deleted: ${VOLUME_NAME_RULE}`, example: 'data-2' })
  @Matches(VOLUME_NAME_PATTERN, { message: `name must be ${VOLUME_NAME_RULE}` })
  @IsString({ message: `name must be a string: ${VOLUME_NAME_RULE}` })
  @IsDefined({ message: 'name is required' })
  name: string;

  @ApiProperty({ description: 'A region id from GET /v1/regions', example: 'id-jkt' })
  @IsNotEmpty({ message: 'region must not be empty' })
  @IsString({ message: 'region must be a string' })
  @IsDefined({ message: 'region is required' })
  region: string;

  @ApiPropertyOptional({
    type: 'integer',
    description: "Size in GB: from the offer's min_gb to max_gb, min_gb + k × step_gb. Required unless snapshot_id is given (then at least the snapshot's size; default: the snapshot's)",
    example: 100,
  })
  @IsInt({ message: 'size_gb must be a whole number of GB' })
  @IsDefined({ message: 'size_gb is required' })
  @ValidateIf((body: PurchaseVolumeBody) => body.snapshot_id === undefined || body.size_gb !== undefined)
  size_gb?: number;

  @TermMonthsMember("Months prepaid; one of the offer's terms", 12)
  term_months: TermMonths;

  @CurrencyMember('The wallet balance that pays')
  currency: Currency;

  @ApiPropertyOptional({ enum: VOLUME_TYPES, default: 'premium', example: 'premium' })
  @IsIn(VOLUME_TYPES, { message: 'type must be premium or ssd' })
  @IsString({ message: 'type must be a string: premium or ssd' })
  @ValidateIf((body: PurchaseVolumeBody) => body.type !== undefined)
  type?: VolumeType;

  @ApiPropertyOptional({
    description: "A zone of the region. Default: the server's zone when server_id is given, else the first zone by id that is available",
    example: 'id-jkt-a',
  })
  @IsNotEmpty({ message: 'zone must not be empty' })
  @IsString({ message: 'zone must be a string' })
  @ValidateIf((body: PurchaseVolumeBody) => body.zone !== undefined)
  zone?: string;

  @ApiPropertyOptional({ description: 'A server of the organization in the same region and zone: the disk is attached to it when ready', example: 'vm_demoweb1' })
  @IsNotEmpty({ message: 'server_id must not be empty' })
  @IsString({ message: 'server_id must be a string' })
  @ValidateIf((body: PurchaseVolumeBody) => body.server_id !== undefined)
  server_id?: string;

  @ApiPropertyOptional({ description: `Only with server_id: ${MOUNT_PATH_RULE}. Default /mnt/<name>`, example: '/mnt/data-2', maxLength: MAX_MOUNT_PATH_LENGTH })
  @IsString({ message: `mount_path must be a string: ${MOUNT_PATH_RULE}` })
  @ValidateIf((body: PurchaseVolumeBody) => body.mount_path !== undefined)
  mount_path?: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: MAX_NOTE_LENGTH, description: 'Free text', example: 'nightly backups' })
  @MaxLength(MAX_NOTE_LENGTH, { message: `note must be at most ${MAX_NOTE_LENGTH} characters` })
  @IsString({ message: 'note must be a string or null' })
  @ValidateIf((body: PurchaseVolumeBody) => body.note !== undefined && body.note !== null)
  note?: string | null;

  @LabelsMember((rules) => `${rules}. Default {}`, { env: 'prod' })
  labels?: Record<string, string>;

  @DeleteProtectionMember('While true, DELETE is refused. Default false', false)
  delete_protection?: boolean;

  @ApiPropertyOptional({
    description: "A snapshot of the organization to restore: the new disk holds its data, in its region (region must name it), of its type (type, when given, must be it); the operation's step restoring makes it",
    example: 'snap_8fKq2LmX9vR4tW7yZ3bN5cHd',
  })
  @IsNotEmpty({ message: 'snapshot_id must not be empty' })
  @IsString({ message: 'snapshot_id must be a string' })
  @ValidateIf((body: PurchaseVolumeBody) => body.snapshot_id !== undefined)
  snapshot_id?: string;

  @AutoRenewMember('Automatic renewal from the wallet before expires_at. Default off')
  auto_renew?: unknown;

  @ApiPropertyOptional({ description: 'A quote of POST /v1/quotes (at most 10 minutes old, unused): its price applies; every member it names must match. Omit it to pay the current price', example: 'quo_4Lm9xQ2vR7tW1yZ3bN5cHd8K' })
  @IsNotEmpty({ message: 'quote_id must not be empty' })
  @IsString({ message: 'quote_id must be a string' })
  @ValidateIf((body: PurchaseVolumeBody) => body.quote_id !== undefined)
  quote_id?: string;
}

/** Body of POST /v1/volumes/{id}/attach. */
export class AttachVolumeBody {
  @ApiProperty({ description: 'A server of the organization in the volume\'s zone', example: 'vm_demoweb1' })
  @IsNotEmpty({ message: 'server_id must not be empty' })
  @IsString({ message: 'server_id must be a string' })
  @IsDefined({ message: 'server_id is required' })
  server_id: string;

  @ApiPropertyOptional({ description: `${MOUNT_PATH_RULE}. Default /mnt/<name>`, example: '/mnt/data', maxLength: MAX_MOUNT_PATH_LENGTH })
  @IsString({ message: `mount_path must be a string: ${MOUNT_PATH_RULE}` })
  @ValidateIf((body: AttachVolumeBody) => body.mount_path !== undefined)
  mount_path?: string;
}

/** Query of DELETE /v1/volumes/{id}. */
export class DeleteVolumeQuery {
  @ApiPropertyOptional({ enum: ['true', 'false'], description: 'true: an attached disk is unmounted and detached first (without it, an attached disk is 409 invalid_state)', example: 'true' })
  @IsOptional()
  @IsIn(['true', 'false'], { message: 'detach must be true or false' })
  @IsString({ message: 'detach must be given once: true or false' })
  detach?: string;
}

/** Body of POST /v1/volumes/{id}/resize. */
export class ResizeVolumeBody {
  @ApiProperty({ type: 'integer', description: "The new size in GB: larger than today's (disks only grow), a multiple of the offer's step_gb, at most its max_gb", example: 200 })
  @IsInt({ message: 'size_gb must be a whole number of GB' })
  @IsDefined({ message: 'size_gb is required' })
  size_gb: number;

  @ApiPropertyOptional({ description: 'true: answer 200 with the price only; nothing reserved or changed', example: false })
  @IsBoolean({ message: 'dry_run must be true or false' })
  @ValidateIf((body: ResizeVolumeBody) => body.dry_run !== undefined)
  dry_run?: boolean;
}
