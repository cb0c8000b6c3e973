import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsIn, IsNotEmpty, IsOptional, IsString, ValidateIf } from 'class-validator';
import { Currency } from '../../../../shared/kernel/money/money';
import { LABEL_KEY_RULE } from '../../../prepaid/domain/labels';
import { TermMonths } from '../../../prepaid/domain/term';
import { AutoRenewMember } from '../../../prepaid/interface/http/auto-renew-member';
import { LabelsMember } from '../../../prepaid/interface/http/label-members';
import { CurrencyMember, RenewalCurrencyMember, TermMonthsMember } from '../../../prepaid/interface/http/term-members';
import { RESERVED_IP_STATUSES, ReservedIpStatus } from '../../domain/reserved-ip';

/** Body of POST /v1/reserved-ips. Unknown members are 400 naming them. */
export class ReserveIpBody {
  @ApiProperty({ description: 'A region id from GET /v1/regions whose reserved_ipv4_price_per_month is not null', example: 'id-jkt' })
  @IsNotEmpty({ message: 'region must not be empty' })
  @IsString({ message: 'region must be a string' })
  @IsDefined({ message: 'region is required' })
  region: string;

  @TermMonthsMember('Months prepaid', 1)
  term_months: TermMonths;

  @CurrencyMember('The wallet balance that pays')
  currency: Currency;

  @ApiPropertyOptional({ description: 'A running or stopped server of the organization in the region, to assign the address to at once', example: 'vm_demoweb1' })
  @IsNotEmpty({ message: 'server_id must not be empty' })
  @IsString({ message: 'server_id must be a string' })
  @ValidateIf((body: ReserveIpBody) => body.server_id !== undefined)
  server_id?: string;

  @LabelsMember((rules) => `${rules}. Default {}`, { role: 'ingress' })
  labels?: Record<string, string>;
}

/** Body of POST /v1/reserved-ips/{id}/assign. */
export class AssignIpBody {
  @ApiProperty({ description: 'A running or stopped server of the organization in the address\'s region, holding no reserved address', example: 'vm_demoweb1' })
  @IsNotEmpty({ message: 'server_id must not be empty' })
  @IsString({ message: 'server_id must be a string' })
  @IsDefined({ message: 'server_id is required' })
  server_id: string;
}

/** Body of POST /v1/reserved-ips/{id}/renew. */
export class RenewIpBody {
  @TermMonthsMember('Months to add', 3)
  term_months: TermMonths;

  @RenewalCurrencyMember('reserved address')
  currency?: Currency;
}

/** Body of PATCH /v1/reserved-ips/{id}: every member optional. */
export class UpdateIpBody {
  @LabelsMember((rules) => `Replaces the whole map ({} removes every label). ${rules}`, { role: 'ingress' })
  labels?: Record<string, string>;

  @AutoRenewMember('Turns automatic renewal on or off; term_months left out keeps the current one')
  auto_renew?: unknown;
}

const single = (name: string) => `${name} must be given once, as a string`;

/** Query of GET /v1/reserved-ips. Unknown parameters are ignored. */
export class ListReservedIpsQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Page size', example: 20 })
  @IsOptional() @IsString({ message: 'limit must be a whole number from 1 to 100' }) limit?: string;

  @ApiPropertyOptional({ description: 'The next_cursor of the previous page' })
  @IsOptional() @IsString({ message: 'cursor must be the next_cursor of a previous page' }) cursor?: string;

  @ApiPropertyOptional({ description: 'Only addresses in this region', example: 'id-jkt' })
  @IsOptional() @IsNotEmpty({ message: 'region must not be empty' }) @IsString({ message: single('region') }) region?: string;

  @ApiPropertyOptional({ enum: RESERVED_IP_STATUSES, description: 'Only addresses in this status; without it every status but released' })
  @IsOptional()
  @IsIn(RESERVED_IP_STATUSES, { message: `status must be one of ${RESERVED_IP_STATUSES.join(', ')}` })
  @IsString({ message: single('status') })
  status?: ReservedIpStatus;

  @ApiPropertyOptional({ type: [String], description: `key=value; repeat it for several labels, all of which must match. Keys: ${LABEL_KEY_RULE}`, example: ['role=ingress'] })
  @IsOptional() @IsString({ each: true, message: 'label must be key=value' }) label?: string | string[];
}
