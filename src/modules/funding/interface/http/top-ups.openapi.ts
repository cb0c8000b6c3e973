import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';
import { CURRENCIES } from '../../../../shared/kernel/money/money';
import { TOP_UP_STATUSES } from '../../domain/top-up';

export class CreateTopUpDto {
  @ApiProperty({ description: 'A decimal string (JSON numbers are refused): USD in whole cents from 5.00 to 10000.00; IDR whole rupiah from 10000 to 150000000', example: '25.00' })
  amount: string;

  @ApiProperty({ enum: CURRENCIES, example: 'USD' })
  currency: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 2048, description: 'Where the checkout sends the customer back (https; http only on localhost), with top_up_id and checkout=paid|canceled added', example: 'https://console.example.com/billing' })
  return_url?: string | null;
}

export class ListTopUpsQueryDto {
  @ApiPropertyOptional({ enum: TOP_UP_STATUSES })
  @IsOptional() @IsString({ message: `status must be one of ${TOP_UP_STATUSES.join(', ')}` }) status?: string;

  @ApiPropertyOptional({ enum: CURRENCIES })
  @IsOptional() @IsString({ message: 'currency must be USD or IDR' }) currency?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Page size', example: 20 })
  @IsOptional() @IsString({ message: 'limit must be a whole number from 1 to 100' }) limit?: string;

  @ApiPropertyOptional({ description: 'The next_cursor of the previous page' })
  @IsOptional() @IsString({ message: 'cursor must be the next_cursor of a previous page' }) cursor?: string;
}

@ApiSchema({ name: 'TopUp', description: 'Money put into the wallet through the hosted checkout' })
export class TopUpResponse {
  @ApiProperty({ example: 'tu_Z9y8X7w6V5u4T3s2R1q0P9o8' })
  id: string;

  @ApiProperty({ enum: TOP_UP_STATUSES, description:
      'pending → succeeded | failed | canceled | expired; a payment received later still makes it succeeded. A refund by the service makes a paid top-up partially_refunded or refunded',
    example: 'pending',
  })
  status: string;

  @ApiProperty({ example: '25.00000' })
  amount: string;

  @ApiProperty({ enum: CURRENCIES, example: 'USD' })
  currency: string;

  @ApiProperty({ example: 'simulated' })
  provider: string;

  @ApiProperty({ type: String, nullable: true, description: 'The hosted checkout page; null unless pending', example: 'http://localhost:3000/checkout/cs_sim_Q1w2E3r4T5y6U7i8O9p0A1s2' })
  checkout_url: string | null;

  @ApiProperty({ type: String, nullable: true, example: null })
  return_url: string | null;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T10:00:00.000Z' })
  created_at: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T10:30:00.000Z' })
  expires_at: string;

  @ApiProperty({ format: 'date-time', description: 'The last status change', example: '2026-11-21T10:00:00.000Z' })
  updated_at: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: null })
  paid_at: string | null;

  @ApiProperty({ type: String, nullable: true, description: "Failed only: the provider's code, or payment_failed", example: null })
  failure_reason: string | null;

  @ApiProperty({ description: "What the service refunded of it (taken from the wallet when refunded); '0.00000' until a refund", example: '0.00000' })
  refunded_amount: string;
}

@ApiSchema({ name: 'TopUpEnvelope' })
export class TopUpEnvelopeResponse {
  @ApiProperty({ type: () => TopUpResponse })
  top_up: TopUpResponse;
}

@ApiSchema({ name: 'TopUpPage' })
export class TopUpPageResponse {
  @ApiProperty({ type: () => [TopUpResponse] })
  top_ups: TopUpResponse[];

  @ApiProperty({ type: String, nullable: true, description: 'Pass as cursor for the next page; null on the last page' })
  next_cursor: string | null;
}

@ApiSchema({ name: 'PaymentEventReceived' })
export class PaymentEventReceivedResponse {
  @ApiProperty({ enum: [true], example: true })
  received: true;
}
