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
