import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsIn, IsInt, IsString, ValidateIf } from 'class-validator';
import { CURRENCIES } from '../../../../shared/kernel/money/money';
import { RENEWAL_TERMS, TermMonths } from '../../domain/term';

/**
 * The members of a request body that name a term and what pays it (purchases, renewals and quotes
 * of every prepaid resource). class-validator checks a property's decorators in the order they
 * are registered and stops at the first failure: the presence first, then the type, then the value.
 */

/** The required `term_months` member: 1, 3 or 12. */
export function TermMonthsMember(description: string, example: TermMonths): PropertyDecorator {
  return applyDecorators(
    ApiProperty({ enum: RENEWAL_TERMS, type: 'integer', description, example }),
    IsDefined({ message: 'term_months is required: 1, 3 or 12' }),
    IsInt({ message: 'term_months must be an integer: 1, 3 or 12' }),
    IsIn(RENEWAL_TERMS, { message: 'term_months must be 1, 3 or 12' }),
  );
}

/** The required `currency` member: USD or IDR. */
export function CurrencyMember(description?: string): PropertyDecorator {
  return applyDecorators(
    ApiProperty({ enum: CURRENCIES, ...(description ? { description } : {}), example: 'USD' }),
    IsDefined({ message: 'currency is required: USD or IDR' }),
    IsString({ message: 'currency must be a string: USD or IDR' }),
    IsIn(CURRENCIES, { message: 'currency must be USD or IDR' }),
  );
}

/** The optional `currency` of a renewal: omitted, the resource's billing currency (null is not "omitted": it is a wrong type). */
export function RenewalCurrencyMember(resource: string): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({ enum: CURRENCIES, description: `Currency to pay in; omitted: the ${resource}'s billing currency`, example: 'USD' }),
    ValidateIf((body: { currency?: unknown }) => body.currency !== undefined),
    IsString({ message: 'currency must be a string: USD or IDR' }),
    IsIn(CURRENCIES, { message: 'currency must be USD or IDR' }),
  );
}
