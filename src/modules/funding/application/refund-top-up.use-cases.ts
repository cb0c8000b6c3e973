import { Injectable, Logger } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { DomainError, notFound } from '../../../shared/kernel/errors/domain-error';
import { newId } from '../../../shared/kernel/ids/ids';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { WalletLedger } from '../../wallet/application/wallet.port';
import { WalletTransaction } from '../../wallet/domain/wallet-transaction';
import { EventOutbox } from '../../webhooks/application/event-outbox.port';
import { RefundInput, TopUpRefund, compensationId, refundNotPossible, refundTooLarge } from '../domain/refund';
import { TopUp, isPaid, paidStatus } from '../domain/top-up';
import { presentTopUp } from '../domain/top-up-json';
import { PaymentGateway, ProviderRefund, RefundRequest } from './payment-gateway.port';
import { RefundStore } from './refunds.port';
import { TopUpStore } from './top-ups.port';

/** Billing staff refunding (the customer's audit log shows their role and justification, never who). */
export interface RefundActor {
  staffId: string;
  role: string;
  justification: string | null;
}

/** A pending refund not settled by the request that made it is asked of the provider again after this, then backing off to an hour. */
export const REFUND_FIRST_RETRY_S = 30;
const REFUND_MAX_RETRY_S = 3600;
const retryDelayS = (attempts: number): number => Math.min(REFUND_FIRST_RETRY_S * 2 ** Math.min(attempts, 10), REFUND_MAX_RETRY_S);

/** What the refund route answers: the refund, its top-up and the debit's ledger row. */
export interface RefundMade {
  refund: TopUpRefund;
  topUp: TopUp;
  transaction: WalletTransaction | null;
}

const requestOf = (refund: TopUpRefund, topUp: TopUp): RefundRequest => ({
  refundId: refund.id,
  topUpId: topUp.id,
  orgId: topUp.orgId,
  sessionId: topUp.sessionId,
  amount: refund.amount,
});

/**
 * THE place where a refund's provider answer takes effect, in the caller's transaction: the
 * top-up's row locked first, then the refund's (every path takes them in that order). `succeeded`
 * records the provider's refund id (unique: one provider refund is one refund); `failed` (the
 * provider refused for good, or reports the refund failed) gives the debit back once, by the
 * compensating adjustment whose id is derived from the refund's (a primary key), takes the amount
 * off the top-up's refunded total, and is audited; `pending` keeps waiting. Anything else
 * (a refund already settled the same way, a replayed event) changes nothing.
 */
@Injectable()
export class RefundOutcomes {
  private readonly logger = new Logger('Refunds');

  constructor(
    private readonly topUps: TopUpStore,
    private readonly refunds: RefundStore,
    private readonly wallet: WalletLedger,
    private readonly audit: AuditTrail,
    private readonly clock: Clock,
  ) {}

  async apply(refundId: string, answer: ProviderRefund): Promise<'applied' | 'no_change'> {
    const seen = await this.refunds.find(refundId);
    if (!seen) return 'no_change';
    const topUp = await this.topUps.lock(seen.topUpId);
    const refund = await this.refunds.lock(refundId);
    if (!topUp || !refund) return 'no_change';
    const now = this.clock.now();
    if (answer.state === 'pending') {
      if (refund.status !== 'pending' || !answer.providerRefundId || refund.providerRefundId === answer.providerRefundId) return 'no_change';
      await this.refunds.save({ ...refund, providerRefundId: answer.providerRefundId, updatedAt: now }, new Date(now.getTime() + REFUND_FIRST_RETRY_S * 1000));
      return 'applied';
    }
    if (answer.state === 'succeeded') {
      if (refund.status === 'succeeded') return 'no_change';
      if (refund.status === 'failed') {
        // The debit was given back, and the provider says the money left after all: the operator decides (a debit adjustment).
        this.logger.error({ msg: 'refund reported succeeded after it was recorded failed and its debit given back: debit the wallet with an adjustment', refund_id: refund.id, top_up_id: topUp.id, provider_refund_id: answer.providerRefundId });
        return 'no_change';
      }
      await this.refunds.save({ ...refund, status: 'succeeded', providerRefundId: answer.providerRefundId ?? refund.providerRefundId, updatedAt: now }, null);
      return 'applied';
    }
    if (refund.status === 'failed') return 'no_change';
    const failureReason = answer.failureReason ?? 'refund_failed';
    await this.refunds.save({ ...refund, status: 'failed', failureReason, providerRefundId: answer.providerRefundId ?? refund.providerRefundId, updatedAt: now }, null);
    const moved = await this.wallet.adjust(topUp.orgId, refund.amount, {
      id: compensationId(refund.id),
      direction: 'credit',
      reason: `Refund of top-up ${topUp.id} not made by the payment provider (${failureReason}): the amount is back in the wallet`,
      reference: refund.id,
      staffId: null,
    });
    if ('refused' in moved) throw new Error('a credit adjustment cannot be refused');
    const refunded = topUp.refundedAmount.minus(refund.amount);
    await this.topUps.saveStatus({ ...topUp, refundedAmount: refunded, status: paidStatus(topUp.amount.minor, refunded.minor), updatedAt: now });
    await this.audit.record({
      orgId: topUp.orgId,
      actorType: 'system',
      actorId: null,
      action: 'wallet.top_up.refund_failed',
      targetId: topUp.id,
      targetType: 'top_up',
      ipAddress: null,
      requestId: null,
      data: { refund_id: refund.id, amount: refund.amount.format(), currency: refund.amount.currency, failure_reason: failureReason },
    });
    this.logger.warn({ msg: 'refund refused by the payment provider: its debit was given back to the wallet', refund_id: refund.id, top_up_id: topUp.id, failure_reason: failureReason });
    return 'applied';
  }
}

/**
 * POST /admin/v1/top-ups/{id}/refund (admin.md "Money"), in two steps. The safe order is to debit
 * first: `begin` (in the caller's idempotent transaction) locks the top-up, checks what is left to
 * refund, debits the wallet (available must cover it: 409 conflict, nothing written) and records
 * the refund `pending`, the top-up's refunded total and status, the audit entry and the
 * `wallet.top_up.refunded` event, all together. Only then `settle` (outside any transaction) asks
 * the provider, idempotently by the refund id, and records its answer: money never leaves the
 * provider for a wallet that could not pay it back. A lost answer leaves the refund pending: a
 * retry of the request, and the worker's sweep, read the provider's truth first (the refund made
 * under this id) before asking again; only a refusal given for good gives the debit back.
 */
@Injectable()
export class RefundTopUp {
  private readonly logger = new Logger('Refunds');

  constructor(
    private readonly uow: UnitOfWork,
    private readonly topUps: TopUpStore,
    private readonly refunds: RefundStore,
    private readonly wallet: WalletLedger,
    private readonly audit: AuditTrail,
    private readonly outbox: EventOutbox,
    private readonly gateway: PaymentGateway,
    private readonly outcomes: RefundOutcomes,
    private readonly clock: Clock,
  ) {}

  /** The top-up (unlocked), 404 when unknown: its currency decides how the amount parses. */
  async topUp(id: string): Promise<TopUp> {
    const topUp = await this.topUps.findAny(id);
    if (!topUp) throw notFound(`Top-up ${id} not found`);
    return topUp;
  }

  /** In the caller's transaction. 404, 409 invalid_state (not paid, or refunded in full), 409 conflict (more than is left, or than available). */
  async begin(actor: RefundActor, topUpId: string, input: RefundInput): Promise<RefundMade> {
    const topUp = await this.topUps.lock(topUpId);
    if (!topUp) throw notFound(`Top-up ${topUpId} not found`);
    if (!isPaid(topUp.status) || topUp.status === 'refunded') throw refundNotPossible(topUp);
    const left = topUp.amount.minus(topUp.refundedAmount);
    const amount = input.amount ?? left;
    if (amount.currency !== topUp.amount.currency) throw new DomainError('invalid_request', `amount is in ${topUp.amount.currency}, the top-up's currency`, { field: 'amount' });
    if (amount.minor > left.minor) throw refundTooLarge(topUp, amount);
    const now = this.clock.now();
    const refund: TopUpRefund = {
      id: newId('rfd'),
      topUpId: topUp.id,
      orgId: topUp.orgId,
      amount,
      reason: input.reason,
      status: 'pending',
      provider: topUp.provider,
      providerRefundId: null,
      failureReason: null,
      staffId: actor.staffId,
      createdAt: now,
      updatedAt: now,
    };
    await this.refunds.insert(refund, new Date(now.getTime() + REFUND_FIRST_RETRY_S * 1000));
    const debit = await this.wallet.debitRefund(topUp.orgId, amount, refund.id, input.reason, topUp.id);
    if ('refused' in debit) {
      throw new DomainError('conflict', `A refund of ${amount.format()} ${amount.currency} is larger than the available ${debit.available.format()} ${amount.currency} of the wallet`, {
        field: 'amount',
        available: debit.available.format(),
        currency: amount.currency,
      });
    }
    const refunded = topUp.refundedAmount.plus(amount);
    const changed: TopUp = { ...topUp, refundedAmount: refunded, status: paidStatus(topUp.amount.minor, refunded.minor), updatedAt: now };
    await this.topUps.saveStatus(changed);
    await this.audit.record({
      orgId: topUp.orgId,
      actorType: 'staff',
      actorId: actor.role,
      action: 'wallet.top_up.refund',
      targetId: topUp.id,
      targetType: 'top_up',
      ipAddress: null,
      data: { refund_id: refund.id, amount: amount.format(), currency: amount.currency, reason: input.reason, justification: actor.justification },
    });
    await this.outbox.recordMany([{ orgId: topUp.orgId, type: 'wallet.top_up.refunded', createdAt: now, data: presentTopUp(changed) }]);
    return { refund, topUp: changed, transaction: debit.transaction };
  }

  /**
   * Asks the provider for a pending refund (outside any transaction) and records its answer.
   * `firstAttempt`: nothing can be at the provider yet, so no look first. Unreachable: the refund
   * stays pending, asked again later (the sweep). Answers the refund as it is afterwards.
   */
  async settle(refundId: string, firstAttempt = false): Promise<TopUpRefund | undefined> {
    const refund = await this.refunds.find(refundId);
    if (!refund || refund.status !== 'pending') return refund;
    const topUp = await this.topUps.findAny(refund.topUpId);
    if (!topUp) return refund;
    const request = requestOf(refund, topUp);
    let answer: ProviderRefund | null;
    try {
      answer = firstAttempt ? null : await this.gateway.retrieveRefund(request);
      answer ??= await this.gateway.refund(request);
    } catch (err) {
      this.logger.warn({ msg: 'refund: the payment provider did not answer; the refund stays pending and is asked again', refund_id: refund.id, err: err instanceof Error ? err.message : String(err) });
      await this.postpone(refund.id);
      return this.refunds.find(refundId);
    }
    const decided = answer;
    await this.uow.run(() => this.outcomes.apply(refund.id, decided));
    // The provider is still at it (Stripe: `pending`, `requires_action`): asked again later, backing off.
    if (decided.state === 'pending') await this.postpone(refund.id);
    return this.refunds.find(refundId);
  }

  private async postpone(refundId: string): Promise<void> {
    await this.uow.run(async () => {
      const locked = await this.refunds.lock(refundId);
      if (locked?.status === 'pending') await this.refunds.postpone(refundId, (attempts) => new Date(this.clock.now().getTime() + retryDelayS(attempts) * 1000));
    });
  }

  /** The refund and its top-up as they are now (the route's answer). */
  async current(refundId: string): Promise<{ refund: TopUpRefund; topUp: TopUp }> {
    const refund = (await this.refunds.find(refundId))!;
    return { refund, topUp: (await this.topUps.findAny(refund.topUpId))! };
  }
}

/** Worker processes: pending refunds whose provider answer was lost (or not final) are asked again, the provider's truth read first. */
@Injectable()
export class SettlePendingRefunds {
  constructor(
    private readonly refunds: RefundStore,
    private readonly refund: RefundTopUp,
    private readonly clock: Clock,
  ) {}

  async runOnce(stopping: () => boolean = () => false): Promise<number> {
    const due = await this.refunds.due(this.clock.now(), 50);
    let settled = 0;
    for (const id of due) {
      if (stopping()) break;
      const after = await this.refund.settle(id);
      if (after && after.status !== 'pending') settled++;
    }
    return settled;
  }
}
