import { DomainError, invalidRequest } from '../../../shared/kernel/errors/domain-error';
import { refuseUnknownMembers } from '../../../shared/kernel/errors/unknown-members';
import { Currency, Money } from '../../../shared/kernel/money/money';
import { TopUp } from './top-up';

export const REFUND_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type RefundStatus = (typeof REFUND_STATUSES)[number];

/**
 * A refund of (part of) a paid top-up: the wallet is debited when it is made (`pending`), the
 * provider then gives the money back (`succeeded`) or refuses for good (`failed`: the debit is
 * given back to the wallet by a compensating adjustment).
 */
export interface TopUpRefund {
  id: string;
  topUpId: string;
  orgId: string;
  amount: Money;
  reason: string;
  status: RefundStatus;
  provider: string;
  providerRefundId: string | null;
  failureReason: string | null;
  staffId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface RefundInput {
  /** Null: what is left of the top-up. */
  amount: Money | null;
  reason: string;
}

/** The body of POST /admin/v1/top-ups/{id}/refund `{amount?, reason}`: 400 naming the member; the amount in the top-up's currency, whole cents for USD. */
export function parseRefundInput(body: unknown, currency: Currency): RefundInput {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw invalidRequest('Request body must be a JSON object', { field: 'body' });
  const b = body as Record<string, unknown>;
  refuseUnknownMembers(b, ['amount', 'reason']);
  const reason = typeof b.reason === 'string' ? b.reason.trim() : '';
  if (b.reason === undefined || b.reason === null) throw invalidRequest('reason is required: 1 to 500 characters, shown to the customer', { field: 'reason' });
  if (reason.length < 1 || reason.length > 500) throw invalidRequest('reason must be 1 to 500 characters (shown to the customer)', { field: 'reason' });
  if (b.amount === undefined || b.amount === null) return { amount: null, reason };
  const rule = currency === 'USD' ? 'a positive decimal string of whole cents such as "10.00"' : 'a positive string of whole rupiah such as "50000"';
  if (typeof b.amount !== 'string') throw invalidRequest(`amount must be ${rule} (no JSON numbers)`, { field: 'amount' });
  const amount = Money.parse(b.amount, currency, 'amount');
  // Card refunds are in cents: the last three of USD's five decimals must be zero.
  if (amount.minor <= 0n || (currency === 'USD' && amount.minor % 1000n !== 0n)) throw invalidRequest(`amount must be ${rule}`, { field: 'amount' });
  return { amount, reason };
}

/** The id of the adjustment that gives a refused refund's debit back (one per refund: the adjustment's primary key). */
export const compensationId = (refundId: string): string => `adj_${refundId.slice('rfd_'.length)}`;

export const refundNotPossible = (t: TopUp): DomainError =>
  t.status === 'refunded'
    ? new DomainError('invalid_state', `Top-up ${t.id} is already refunded in full`, { status: t.status })
    : new DomainError('invalid_state', `Top-up ${t.id} is ${t.status}; only a paid top-up (succeeded or partially_refunded) can be refunded`, { status: t.status });

export const refundTooLarge = (t: TopUp, amount: Money): DomainError =>
  new DomainError('conflict', `A refund of ${amount.format()} ${amount.currency} is more than the ${t.amount.minus(t.refundedAmount).format()} ${amount.currency} left to refund of top-up ${t.id}`, {
    field: 'amount',
    refundable: t.amount.minus(t.refundedAmount).format(),
    currency: amount.currency,
  });
