import { Body, Controller, Param, Post, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiProperty, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { IsDefined, IsIn, IsOptional, IsString } from 'class-validator';
import type { Request, Response } from 'express';
import { CURRENCIES } from '../../../../shared/kernel/money/money';
import { IdempotentExecution } from '../../../idempotency/application/idempotent-execution';
import { jsonResponse, sendOutcome, storableErrors } from '../../../idempotency/interface/http/idempotent-request';
import { AdjustWallet, AdjustmentRecord } from '../../../operator/adjust-wallet.use-case';
import { presentWalletTransaction } from '../../../wallet/domain/wallet-transaction-json';
import { RefundTopUp } from '../../../funding/application/refund-top-up.use-cases';
import { TopUpRefund, parseRefundInput } from '../../../funding/domain/refund';
import { presentTopUp } from '../../../funding/domain/top-up-json';
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

export class TopUpRefundDto {
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: "In the top-up's currency: a positive decimal string of whole cents (USD) or whole rupiah (IDR), at most what is left to refund. Omitted: all that is left.",
    example: '10.00',
  })
  @IsOptional() @IsString({ message: 'amount must be a positive decimal string such as "10.00"' })
  amount?: string | null;

  @ApiProperty({ minLength: 1, maxLength: 500, description: 'Shown to the customer in the wallet history', example: 'Customer asked for the unused balance back (SUP-1234)' })
  @IsString({ message: 'reason must be 1 to 500 characters' }) @IsDefined({ message: 'reason is required' })
  reason: string;
}

export function presentRefund(r: TopUpRefund) {
  return {
    id: r.id,
    top_up_id: r.topUpId,
    organization_id: r.orgId,
    amount: r.amount.format(),
    currency: r.amount.currency,
    reason: r.reason,
    status: r.status,
    provider: r.provider,
    provider_refund_id: r.providerRefundId,
    failure_reason: r.failureReason,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  };
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
    private readonly refunds: RefundTopUp,
  ) {}

  @Post('top-ups/:id/refund')
  @AdminRoute({ roles: BILLING, justification: true })
  @ApiOperation({
    operationId: 'refundTopUp',
    summary: "Refund a paid top-up, in full or in part, through the payment provider",
    description:
      "Billing staff. Debits the organization's wallet at once (available must cover it: 409 conflict, nothing written), then asks the payment provider to give the money back " +
      '(idempotently, keyed by the refund id). The answer shows the refund (`succeeded`, `pending` while the provider has not answered: the worker asks again, or `failed` when the provider ' +
      'refused it for good: the debit is given back to the wallet) and the top-up (`refunded_amount`, status `partially_refunded` or `refunded`). 409 invalid_state unless the top-up is paid ' +
      'and not refunded in full; 409 conflict above what is left to refund. Idempotency-Key required: a retry answers the same refund as it is now.',
  })
  async refund(
    @Param('id') topUpId: string,
    @Body() body: TopUpRefundDto,
    @CurrentStaff() staff: StaffPrincipal & { justification: string | null },
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const scope = adminIdempotencyScope(req);
    // The body's own rules first (400 before 404); the amount is read again in the top-up's currency.
    parseRefundInput(body, 'USD');
    const outcome = await this.idempotent.run(
      scope,
      async () => {
        const topUp = await this.refunds.topUp(topUpId);
        auditTarget(req, { organizationId: topUp.orgId, targetType: 'top_up', targetId: topUp.id });
        const input = parseRefundInput(body, topUp.amount.currency);
        const made = await this.refunds.begin({ staffId: staff.staffId, role: staff.role, justification: staff.justification }, topUpId, input);
        return jsonResponse(201, { refund: presentRefund(made.refund), top_up: presentTopUp(made.topUp), transaction: made.transaction && presentWalletTransaction(made.transaction) });
      },
      storableErrors(req, ['not_found', 'conflict', 'invalid_state']),
    );
    if (outcome.response.status !== 201) return sendOutcome(res, outcome);
    const stored = JSON.parse(outcome.response.body) as { refund: { id: string; organization_id: string; top_up_id: string }; transaction: unknown };
    auditTarget(req, { organizationId: stored.refund.organization_id, targetType: 'top_up', targetId: stored.refund.top_up_id });
    // The debit is committed: now the provider (outside any transaction); a retry of the request finishes a refund still pending.
    const settled = await this.refunds.settle(stored.refund.id, !outcome.replayed);
    const now = await this.refunds.current(stored.refund.id);
    sendOutcome(res, {
      ...outcome,
      response: { ...outcome.response, body: JSON.stringify({ refund: presentRefund(settled ?? now.refund), top_up: presentTopUp(now.topUp), transaction: stored.transaction }) },
    });
  }

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
