import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsIn, IsNotEmpty, IsOptional, IsString, Matches, ValidateIf } from 'class-validator';
import { Currency } from '../../../../shared/kernel/money/money';
import { LABEL_KEY_RULE } from '../../../prepaid/domain/labels';
import { TermMonths } from '../../../prepaid/domain/term';
import { AutoRenewMember } from '../../../prepaid/interface/http/auto-renew-member';
import { LabelsMember } from '../../../prepaid/interface/http/label-members';
import { CurrencyMember, RenewalCurrencyMember, TermMonthsMember } from '../../../prepaid/interface/http/term-members';
import { SNAPSHOT_NAME_PATTERN, SNAPSHOT_NAME_RULE, SNAPSHOT_STATUSES, SnapshotStatus } from '../../domain/snapshot';

/** Body of POST /v1/volumes/{id}/snapshots. Unknown members are 400 naming them. */
export class CreateSnapshotBody {
  @ApiProperty({ description: SNAPSHOT_NAME_RULE, example: 'before-upgrade' })
  @Matches(SNAPSHOT_NAME_PATTERN, { message: `name must be ${SNAPSHOT_NAME_RULE}` })
  @IsString({ message: `name must be a string: ${SNAPSHOT_NAME_RULE}` })
  @IsDefined({ message: 'name is required' })
  name: string;

  @TermMonthsMember('Months prepaid', 1)
  term_months: TermMonths;

  @CurrencyMember('The wallet balance that pays')
  currency: Currency;

  @LabelsMember((rules) => `${rules}. Default {}`, { env: 'prod' })
  labels?: Record<string, string>;
}

/** Body of POST /v1/snapshots/{id}/renew. */
export class RenewSnapshotBody {
  @TermMonthsMember('Months to add', 3)
  term_months: TermMonths;

  @RenewalCurrencyMember('snapshot')
  currency?: Currency;
}

/** Body of PATCH /v1/snapshots/{id}: every member optional. */
export class UpdateSnapshotBody {
  @ApiPropertyOptional({ description: SNAPSHOT_NAME_RULE, example: 'before-upgrade-2' })
  @Matches(SNAPSHOT_NAME_PATTERN, { message: `name must be ${SNAPSHOT_NAME_RULE}` })
  @IsString({ message: `name must be a string: ${SNAPSHOT_NAME_RULE}` })
  @ValidateIf((body: UpdateSnapshotBody) => body.name !== undefined)
  name?: string;

  @LabelsMember((rules) => `Replaces the whole map ({} removes every label). ${rules}`, { env: 'prod' })
  labels?: Record<string, string>;

  @AutoRenewMember('Turns automatic renewal on or off; term_months left out keeps the current one')
  auto_renew?: unknown;
}

const single = (name: string) => `${name} must be given once, as a string`;

/** Query of GET /v1/snapshots. Unknown parameters are ignored. */
export class ListSnapshotsQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Page size', example: 20 })
  @IsOptional() @IsString({ message: 'limit must be a whole number from 1 to 100' }) limit?: string;

  @ApiPropertyOptional({ description: 'The next_cursor of the previous page' })
  @IsOptional() @IsString({ message: 'cursor must be the next_cursor of a previous page' }) cursor?: string;

  @ApiPropertyOptional({ description: 'Only the snapshots of this disk (deleted disks too)', example: 'vol_demodata1' })
  @IsOptional() @IsNotEmpty({ message: 'volume_id must not be empty' }) @IsString({ message: single('volume_id') }) volume_id?: string;

  @ApiPropertyOptional({ description: 'Only snapshots in this region', example: 'id-jkt' })
  @IsOptional() @IsNotEmpty({ message: 'region must not be empty' }) @IsString({ message: single('region') }) region?: string;

  @ApiPropertyOptional({ enum: SNAPSHOT_STATUSES, description: 'Only snapshots in this status; without it every status but deleted' })
  @IsOptional()
  @IsIn(SNAPSHOT_STATUSES, { message: `status must be one of ${SNAPSHOT_STATUSES.join(', ')}` })
  @IsString({ message: single('status') })
  status?: SnapshotStatus;

  @ApiPropertyOptional({ type: [String], description: `key=value; repeat it for several labels, all of which must match. Keys: ${LABEL_KEY_RULE}`, example: ['env=prod'] })
  @IsOptional() @IsString({ each: true, message: 'label must be key=value' }) label?: string | string[];
}
