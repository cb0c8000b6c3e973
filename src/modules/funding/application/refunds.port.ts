import { TopUpRefund } from '../domain/refund';

/** Refunds of top-ups, in the active transaction. */
export abstract class RefundStore {
  /** A new `pending` refund, asked of the provider again from `nextAttemptAt` if still pending then. */
  abstract insert(refund: TopUpRefund, nextAttemptAt: Date): Promise<void>;
  abstract find(id: string): Promise<TopUpRefund | undefined>;
  /** The refund, its row locked to the end of the transaction. */
  abstract lock(id: string): Promise<TopUpRefund | undefined>;
  abstract findByProviderRefundId(provider: string, providerRefundId: string): Promise<TopUpRefund | undefined>;
  /** Writes status, provider refund id, failure reason and updated_at; `nextAttemptAt` null unless still pending. */
  abstract save(refund: TopUpRefund, nextAttemptAt: Date | null): Promise<void>;
  /** A pending (locked) refund not settled by this attempt: asked again at `next(attempts so far)`; attempts + 1. */
  abstract postpone(id: string, next: (attempts: number) => Date): Promise<void>;
  /** Pending refunds due for another look at the provider, oldest first. */
  abstract due(now: Date, limit: number): Promise<string[]>;
  /** Pending refunds of the top-up: asked again now (an event said its charge was refunded). */
  abstract hurry(topUpId: string, now: Date): Promise<number>;
  /** The top-up's refunds, oldest first. */
  abstract ofTopUp(topUpId: string): Promise<TopUpRefund[]>;
}
