import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsIn, IsInt, IsOptional, IsString, ValidateIf } from 'class-validator';
import { CURRENCIES, Currency } from '../../../../shared/kernel/money/money';
import { RENEWAL_TERMS, TermMonths } from '../../domain/volume';

/**
 * Body of POST /v1/volumes/{id}/renew. Unknown members are ignored. class-validator runs a
 * property's checks bottom-up and stops at the first failure: the type check sits below the value check.
 */
export class RenewVolumeBody {
  @ApiProperty({ enum: RENEWAL_TERMS, type: 'integer', description: 'Months to add', example: 3 })
  @IsIn(RENEWAL_TERMS, { message: 'term_months must be 1, 3 or 12' })
  @IsInt({ message: 'term_months must be an integer: 1, 3 or 12' })
  @IsDefined({ message: 'term_months is required: 1, 3 or 12' })
  term_months: TermMonths;

  @ApiPropertyOptional({ enum: CURRENCIES, description: "Currency to pay in; omitted: the volume's billing currency", example: 'USD' })
  // Omitted: the volume's billing currency. null is not "omitted": it is a wrong type.
  @IsIn(CURRENCIES, { message: 'currency must be USD or IDR' })
  @IsString({ message: 'currency must be a string: USD or IDR' })
  @ValidateIf((body: RenewVolumeBody) => body.currency !== undefined)
  currency?: Currency;
}

export class ListVolumesQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Page size', example: 20 })
  @IsOptional() @IsString({ message: 'limit must be a whole number from 1 to 100' }) limit?: string;
  @ApiPropertyOptional({ description: 'The next_cursor of the previous page' })
  @IsOptional() @IsString({ message: 'cursor must be the next_cursor of a previous page' }) cursor?: string;
}
