import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { CURRENCIES, Currency } from '../../../../shared/kernel/money/money';

/** Response body of GET /v1/wallet, for the OpenAPI document (examples: seeds/demo.json). */

@ApiSchema({ name: 'Balance', description: 'Amounts are decimal strings: USD with five decimals, IDR whole rupiah' })
export class BalanceResponse {
  @ApiProperty({ enum: CURRENCIES, example: 'USD' })
  currency: Currency;

  @ApiProperty({ description: 'What can be spent now', example: '100.00000' })
  available: string;

  @ApiProperty({ description: 'Held for operations still running; captured on success, released on failure', example: '0.00000' })
  reserved: string;
}

@ApiSchema({ name: 'Wallet' })
export class WalletResponse {
  @ApiProperty({
    type: () => [BalanceResponse],
    example: [
      { currency: 'USD', available: '100.00000', reserved: '0.00000' },
      { currency: 'IDR', available: '1500000', reserved: '0' },
    ],
  })
  balances: BalanceResponse[];
}
