import { Currency } from '../../../shared/kernel/money/money';
import { TopUp, TopUpStatus } from '../domain/top-up';

export interface TopUpFilter {
  status?: TopUpStatus;
  currency?: Currency;
}

export interface TopUpCursor {
  createdAt: string;
  id: string;
}

/** What a payment event did (payment_events.outcome). */
export type EventOutcome = 'applied' | 'no_change' | 'ignored' | 'unmatched';

/** Top-ups and the payment events received, in the active transaction. */
export abstract class TopUpStore {
  abstract insert(topUp: TopUp): Promise<void>;
  abstract find(orgId: string, id: string): Promise<TopUp | undefined>;
  /** Any organization's top-up (staff and the provider's refunds). */
  abstract findAny(id: string): Promise<TopUp | undefined>;
  abstract list(orgId: string, filter: TopUpFilter, limit: number, after: TopUpCursor | undefined): Promise<{ items: TopUp[]; next: TopUpCursor | null }>;
  abstract countPending(orgId: string): Promise<number>;
  /** Locks the organization's row (FOR NO KEY UPDATE): pending counts and inserts of one organization take turns. */
  abstract lockOrganization(orgId: string): Promise<void>;
  /** The top-up, its row locked to the end of the transaction. */
  abstract lock(id: string): Promise<TopUp | undefined>;
  /** Writes status, updated_at, paid_at and failure_reason of a locked top-up. */
  abstract saveStatus(topUp: TopUp): Promise<void>;
  /** Pending top-ups past their expiry at `now`, oldest first. */
  abstract duePending(now: Date, limit: number): Promise<{ id: string; sessionId: string }[]>;
  /** Records a received event; false when (provider, event id) was recorded before (a duplicate). */
  abstract recordEvent(provider: string, eventId: string, type: string, topUpId: string | null): Promise<boolean>;
  abstract setEventOutcome(provider: string, eventId: string, outcome: EventOutcome): Promise<void>;
}
