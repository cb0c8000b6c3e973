import { Body, Controller, Param, Post, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiProperty, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { IsDefined, IsIn, IsOptional, IsString } from 'class-validator';
import type { Request, Response } from 'express';
import { CURRENCIES } from '../../../../shared/kernel/money/money';
import { IdempotentExecution } from '../../../idempotency/application/idempotent-execution';
import { jsonResponse, sendOutcome, storableErrors } from '../../../idempotency/interface/http/idempotent-request';
import { AdjustWallet, AdjustmentRecord } from '../../../operator/adjust-wallet.use-case';
import { presentWalletTransaction } from '../../../wallet/domain/wallet-transaction-json';
import { BILLING } from '../../domain/staff';
import { adminIdempotencyScope } from './admin-idempotency';
import { AdminController, AdminRoute, CurrentStaff, auditTarget } from './admin.decorators';
import { StaffPrincipal } from '../../domain/staff';

export class WalletAdjustmentDto {
  @ApiProperty({ enum: CURRENCIES, example: 'USD' })
  @IsString({ message: 'currency must be USD or IDR' }) @IsDefined({ message: 'currency is required' })
  currency: string;

  @ApiProperty({ description: 'A positive decimal string (USD: at most 5 decimals; IDR: whole rupiah)', example: '25.00' })
  @IsString({ message: 'amount must be a decimal string such as "25.50"' }) @IsDefined({ message: 'amount is required' })
  amount: string;

  @ApiProperty({ enum: ['credit', 'debit'], example: 'credit' })
  @IsIn(['credit', 'debit'], { message: 'direction must be credit or debit' }) @IsDefined({ message: 'direction is required' })
  direction: string;

  @ApiProperty({ minLength: 1, maxLength: 500, description: 'Shown to the customer in the wallet history', example: 'Goodwill credit for the outage of 2026-11-20' })
  @IsString({ message: 'reason must be 1 to 500 characters' }) @IsDefined({ message: 'reason is required' })
  reason: string;

  @ApiPropertyOptional({ type: String, nullable: true, description: 'Your reference (a ticket id, an invoice)', example: 'SUP-1234' })
  @IsOptional() @IsString({ message: 'reference must be 1 to 200 characters' })
  reference?: string | null;
}

export function presentAdjustment(a: AdjustmentRecord) {
  const t = a.credit.transaction;
  return {
    adjustment: {
      id: a.id, organization_id: a.orgId, currency: t.currency, amount: t.amount.format(), direction: a.direction, reason: a.reason, reference: a.reference,
      created_at: t.createdAt.toISOString(),
    },
    transaction: presentWalletTransaction(t),
    balance: { currency: a.credit.balance.currency, available: a.credit.balance.available.format(), reserved: a.credit.balance.reserved.format() },
  };
}

/** Money for billing staff: wallet adjustments (and refunds of top-ups). */
@ApiTags('Money')
@AdminController()
@Controller('admin/v1')
export class AdminMoneyController {
  constructor(
    private readonly adjustWallet: AdjustWallet,
    private readonly idempotent: IdempotentExecution,
  ) {}

  @Post('organizations/:id/wallet/adjustments')
  @AdminRoute({ roles: BILLING, justification: true })
  @ApiOperation({
    operationId: 'adjustWallet',
    summary: "Credit or debit an organization's wallet with a reason shown to the customer",
    description: 'Billing staff. A debit larger than available is 409 conflict and changes nothing (available never goes below zero). Idempotency-Key required.',
  })
  async adjust(
    @Param('id') orgId: string,
    @Body() body: WalletAdjustmentDto,
    @CurrentStaff() staff: StaffPrincipal & { justification: string | null },
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const outcome = await this.idempotent.run(
      adminIdempotencyScope(req),
      async () => {
        const record = await this.adjustWallet.execute(
          { orgId, currency: body.currency, amount: body.amount, direction: body.direction, reason: body.reason, reference: body.reference },
          { type: 'staff', staffId: staff.staffId, role: staff.role, justification: staff.justification },
        );
        auditTarget(req, { organizationId: orgId, targetType: 'wallet_adjustment', targetId: record.id });
        return jsonResponse(201, presentAdjustment(record));
      },
      storableErrors(req, ['not_found', 'conflict']),
    );
    sendOutcome(res, outcome);
  }
}
