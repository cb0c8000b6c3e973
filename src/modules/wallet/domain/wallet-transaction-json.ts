import { WalletTransaction } from './wallet-transaction';

/** A wallet transaction as GET /v1/wallet/transactions lists it (and the wallet.credited event carries it). */
export function presentWalletTransaction(t: WalletTransaction) {
  return {
    id: t.id,
    type: t.type,
    currency: t.currency,
    amount: t.amount.format(),
    available_after: t.availableAfter.format(),
    reserved_after: t.reservedAfter.format(),
    source: t.source,
    operation_id: t.operationId,
    top_up_id: t.topUpId,
    description: t.description,
    created_at: t.createdAt.toISOString(),
    // Adjustments and refunds only: which way, why (shown to the customer), and the record behind it.
    ...(t.direction === undefined ? {} : { direction: t.direction, reason: t.reason ?? null }),
    ...(t.adjustmentId ? { adjustment_id: t.adjustmentId } : {}),
    ...(t.refundId ? { refund_id: t.refundId } : {}),
  };
}

export type WalletTransactionJson = ReturnType<typeof presentWalletTransaction>;
