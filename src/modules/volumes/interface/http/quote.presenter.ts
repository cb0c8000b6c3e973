import { formatPricePair } from '../../../../shared/kernel/money/money';
import { Quote } from '../../domain/quote';

/** A quote on the wire (lifecycle.md "Quotes"). */
export function presentQuote(q: Quote) {
  return {
    id: q.id,
    kind: 'volume' as const,
    region: q.regionId,
    type: q.type,
    size_gb: q.sizeGb,
    term_months: q.termMonths,
    currency: q.currency,
    price_per_gb_month: formatPricePair(q.price),
    amount: q.amount.format(),
    created_at: q.createdAt.toISOString(),
    expires_at: q.expiresAt.toISOString(),
    used_at: q.usedAt ? q.usedAt.toISOString() : null,
  };
}
