import { IsDefined, IsIn, IsInt, IsOptional, IsString, ValidateIf } from 'class-validator';
import { CURRENCIES, Currency } from '../../../../shared/kernel/money/money';
import { RENEWAL_TERMS, TermMonths } from '../../domain/volume';

/**
 * Body of POST /v1/volumes/{id}/renew. Unknown members are ignored. class-validator runs a
 * property's checks bottom-up and stops at the first failure: the type check sits below the value check.
 */
export class RenewVolumeBody {
  @IsIn(RENEWAL_TERMS, { message: 'term_months must be 1, 3 or 12' })
  @IsInt({ message: 'term_months must be an integer: 1, 3 or 12' })
  @IsDefined({ message: 'term_months is required: 1, 3 or 12' })
  term_months: TermMonths;

  // Omitted: the volume's billing currency. null is not "omitted": it is a wrong type.
  @IsIn(CURRENCIES, { message: 'currency must be USD or IDR' })
  @IsString({ message: 'currency must be a string: USD or IDR' })
  @ValidateIf((body: RenewVolumeBody) => body.currency !== undefined)
  currency?: Currency;
}

export class ListVolumesQuery {
  @IsOptional() @IsString({ message: 'limit must be a whole number from 1 to 100' }) limit?: string;
  @IsOptional() @IsString({ message: 'cursor must be the next_cursor of a previous page' }) cursor?: string;
}
