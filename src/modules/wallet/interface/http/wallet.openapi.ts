import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';
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

/** GET /v1/wallet/transactions */
export class WalletTransactionsQueryDto {
  @ApiPropertyOptional({ enum: CURRENCIES, description: 'Only movements of this currency' })
  @IsOptional() @IsString({ message: 'currency must be USD or IDR' }) currency?: string;

  @ApiPropertyOptional({ enum: ['credit', 'hold', 'capture', 'release', 'adjustment', 'refund'], description: 'Only movements of this type' })
  @IsOptional() @IsString({ message: 'type must be one of credit, hold, capture, release, adjustment, refund' }) type?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Movements at or after this instant (ISO 8601 with a zone)', example: '2026-11-01T00:00:00Z' })
  @IsOptional() @IsString({ message: 'since must be an ISO 8601 timestamp' }) since?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Movements before this instant (ISO 8601 with a zone)', example: '2026-12-01T00:00:00Z' })
  @IsOptional() @IsString({ message: 'until must be an ISO 8601 timestamp' }) until?: string;

  @ApiPropertyOptional({ description: 'Only the hold and settlement of this operation', example: 'op_7Hq2mXc9LpV4sKd1Rt8Ebw3N' })
  @IsOptional() @IsString({ message: 'operation_id must be a string' }) operation_id?: string;

  @ApiPropertyOptional({ description: 'Only the credit of this top-up', example: 'tu_Z9y8X7w6V5u4T3s2R1q0P9o8' })
  @IsOptional() @IsString({ message: 'top_up_id must be a string' }) top_up_id?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Page size', example: 20 })
  @IsOptional() @IsString({ message: 'limit must be a whole number from 1 to 100' }) limit?: string;

  @ApiPropertyOptional({ description: 'The next_cursor of the previous page' })
  @IsOptional() @IsString({ message: 'cursor must be the next_cursor of a previous page' }) cursor?: string;
}

@ApiSchema({ name: 'WalletTransaction', description: 'One movement of the wallet, with the balance of its currency right after it' })
export class WalletTransactionResponse {
  @ApiProperty({ example: 'wtx_3f9c1e0b7a2d4c6e8f0a1b2c3d4e5f60' })
  id: string;

  @ApiProperty({
    enum: ['credit', 'hold', 'capture', 'release', 'adjustment', 'refund'],
    description:
      'credit: available +; hold: available −, reserved +; capture: reserved −; release: reserved −, available +; ' +
      "adjustment: available + or − by the service's billing staff (direction, reason); refund: available − for a refunded top-up (reason)",
    example: 'credit',
  })
  type: string;

  @ApiProperty({ enum: CURRENCIES, example: 'USD' })
  currency: Currency;

  @ApiProperty({ description: 'Always positive; the type says which way it moved', example: '25.00000' })
  amount: string;

  @ApiProperty({ description: "This currency's available balance right after the movement", example: '125.00000' })
  available_after: string;

  @ApiProperty({ description: "This currency's reserved balance right after the movement", example: '0.00000' })
  reserved_after: string;

  @ApiProperty({ type: String, nullable: true, enum: ['operator', 'top_up', null], description: 'Credits: operator (support, seed) or top_up; null for the other types', example: 'top_up' })
  source: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'The operation a hold, capture or release is for; null for credits', example: null })
  operation_id: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'The top-up a credit fulfils', example: 'tu_Z9y8X7w6V5u4T3s2R1q0P9o8' })
  top_up_id: string | null;

  @ApiProperty({
    description:
      'What the customer reads on a statement: a credit names its top-up or the operator; a capture is the charge ' +
      '("Renewal of disk data-1 for 1 month", "Purchase of server web-1 for 3 months"); a hold reads "Reserved for …" and a ' +
      'release "Reservation released (not charged): …". Disk and server names are their names now.',
    example: 'Renewal of disk data-1 for 1 month',
  })
  description: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T10:00:00.000Z' })
  created_at: string;

  @ApiPropertyOptional({ enum: ['credit', 'debit'], description: 'Adjustments and refunds only: which way available moved', example: 'credit' })
  direction?: string;

  @ApiPropertyOptional({ type: String, nullable: true, description: 'Adjustments and refunds only: the reason given by the service', example: 'Goodwill credit for the outage of 2026-11-20' })
  reason?: string | null;

  @ApiPropertyOptional({ description: 'Adjustments only: the adjustment', example: 'adj_Z9y8X7w6V5u4T3s2R1q0P9o8' })
  adjustment_id?: string;

  @ApiPropertyOptional({ description: 'Refunds only: the refund', example: 'rfd_Z9y8X7w6V5u4T3s2R1q0P9o8' })
  refund_id?: string;
}

@ApiSchema({ name: 'WalletTransactionPage' })
export class WalletTransactionPageResponse {
  @ApiProperty({ type: () => [WalletTransactionResponse] })
  transactions: WalletTransactionResponse[];

  @ApiProperty({ type: String, nullable: true, description: 'Pass as cursor for the next page; null on the last page' })
  next_cursor: string | null;
}
