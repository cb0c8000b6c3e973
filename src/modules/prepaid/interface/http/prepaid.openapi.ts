import { ApiExtraModels, ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { nullableRef } from '../../../../shared/http/openapi';
import { CURRENCIES } from '../../../../shared/kernel/money/money';
import { RENEWAL_TERMS } from '../../domain/term';

/** The members every prepaid resource shows (volumes, servers, and the resources to come), for the OpenAPI document. */

@ApiSchema({ name: 'Billing', description: 'The current term: its currency and amount (USD five decimals, IDR whole rupiah)' })
export class BillingResponse {
  @ApiProperty({ enum: CURRENCIES, example: 'USD' })
  currency: string;

  @ApiProperty({ example: '2.00000' })
  amount: string;
}

@ApiSchema({ name: 'AutoRenewAttempt', description: 'The last automatic renewal attempt: accepted (its operation), or refused for want of money (the 402\'s details)' })
export class AutoRenewAttemptResponse {
  @ApiProperty({ format: 'date-time', example: '2026-12-18T00:00:04.000Z' })
  at: string;

  @ApiProperty({ enum: ['accepted', 'insufficient_balance'], example: 'insufficient_balance' })
  outcome: string;

  @ApiProperty({ type: String, nullable: true, description: 'The renewal operation; null unless accepted', example: null })
  operation_id: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'What the renewal costs; null unless insufficient_balance', example: '2.00000' })
  required: string | null;

  @ApiProperty({ type: String, nullable: true, description: "The wallet's available balance then; null unless insufficient_balance", example: '0.50000' })
  available: string | null;

  @ApiProperty({ type: String, enum: [...CURRENCIES, null], nullable: true, description: 'null unless insufficient_balance', example: 'USD' })
  currency: string | null;
}

@ApiExtraModels(AutoRenewAttemptResponse)
@ApiSchema({ name: 'AutoRenew', description: 'Automatic renewal: when enabled, the resource is renewed from the wallet AUTO_RENEW_LEAD_S before expires_at (terms)' })
export class AutoRenewResponse {
  @ApiProperty({ example: true })
  enabled: boolean;

  @ApiProperty({ type: 'integer', enum: [...RENEWAL_TERMS, null], nullable: true, description: "The term each automatic renewal buys; null: the resource's own term_months at the time", example: null })
  term_months: number | null;

  @ApiProperty({ ...nullableRef(AutoRenewAttemptResponse), description: 'null before the first attempt' })
  last_attempt: AutoRenewAttemptResponse | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'When the next attempt is due; null unless enabled, and while an accepted renewal runs', example: '2026-12-18T00:00:00.000Z' })
  next_attempt_at: string | null;
}

@ApiSchema({ name: 'AutoRenewInput', description: 'Turns automatic renewal on or off' })
export class AutoRenewInput {
  @ApiProperty({ example: true })
  enabled: boolean;

  @ApiPropertyOptional({ type: 'integer', enum: [...RENEWAL_TERMS, null], nullable: true, description: "The term each automatic renewal buys (servers: a term the region sells); null or omitted: the resource's own term_months", example: 1 })
  term_months?: number | null;
}

@ApiSchema({ name: 'ChargeAmount', description: 'An amount in one currency (USD five decimals, IDR whole rupiah)' })
export class ChargeAmountResponse {
  @ApiProperty({ enum: CURRENCIES, example: 'USD' })
  currency: string;

  @ApiProperty({ example: '0.66667' })
  amount: string;
}

@ApiSchema({ name: 'DryRunPrice', description: 'dry_run: what the change would be charged now (for the rest of the term); nothing reserved or changed' })
export class DryRunPriceResponse {
  @ApiProperty({ type: ChargeAmountResponse })
  amount: ChargeAmountResponse;
}
