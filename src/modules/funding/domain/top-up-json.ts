import { TopUp } from './top-up';

/** A top-up as GET /v1/wallet/top-ups/{id} returns it (and the wallet.top_up.* events carry it). */
export function presentTopUp(t: TopUp) {
  return {
    id: t.id,
    status: t.status,
    amount: t.amount.format(),
    currency: t.amount.currency,
    provider: t.provider,
    checkout_url: t.status === 'pending' ? t.checkoutUrl : null,
    return_url: t.returnUrl,
    created_at: t.createdAt.toISOString(),
    expires_at: t.expiresAt.toISOString(),
    updated_at: t.updatedAt.toISOString(),
    paid_at: t.paidAt?.toISOString() ?? null,
    failure_reason: t.failureReason,
    refunded_amount: t.refundedAmount.format(),
  };
}

export type TopUpJson = ReturnType<typeof presentTopUp>;
