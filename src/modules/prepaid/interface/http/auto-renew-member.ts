import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsObject, ValidateIf } from 'class-validator';
import { AutoRenewInput } from './prepaid.openapi';

/**
 * The optional `auto_renew` member of a purchase or PATCH body (servers and volumes alike):
 * `{enabled, term_months?}`, an object here; its members are judged by the domain's
 * checkAutoRenew (400 naming auto_renew.enabled, auto_renew.term_months or an unknown member).
 */
export function AutoRenewMember(description: string): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({ type: () => AutoRenewInput, description }),
    IsObject({ message: 'auto_renew must be an object: {enabled, term_months?}' }),
    ValidateIf((body: { auto_renew?: unknown }) => body.auto_renew !== undefined),
    // The object as parsed: its members are checked by the use case.
    Transform(({ obj }: { obj: { auto_renew?: unknown } }) => obj.auto_renew),
  );
}
