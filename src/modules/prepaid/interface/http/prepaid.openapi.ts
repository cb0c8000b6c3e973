import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { CURRENCIES } from '../../../../shared/kernel/money/money';

/** The members every prepaid resource shows (volumes, servers, and the resources to come), for the OpenAPI document. */

@ApiSchema({ name: 'Billing', description: 'The current term: its currency and amount (USD five decimals, IDR whole rupiah)' })
export class BillingResponse {
  @ApiProperty({ enum: CURRENCIES, example: 'USD' })
  currency: string;

  @ApiProperty({ example: '2.00000' })
  amount: string;
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
