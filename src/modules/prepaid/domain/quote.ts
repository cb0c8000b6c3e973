import { DomainError, invalidRequest, invalidState } from '../../../shared/kernel/errors/domain-error';
import { Money, PricePair } from '../../../shared/kernel/money/money';

/**
 * Quotes: a price locked for 10 minutes for one purchase of any resource kind (a disk's, a
 * server's), used once. Each kind says which members of its purchase a quote fixes.
 */

/** A quote locks the price for this long (interface.md section 8, "Quote age"). */
export const QUOTE_TTL_MS = 10 * 60 * 1000;

/** A member of a purchase that a quote fixes: its name in the API and how to read it. */
export interface QuotedMember<T> {
  field: string;
  of: (o: T) => string | number;
}

/** 400 naming the first of `members` in which `purchase` differs from quote `quoteId`'s terms (disk and server quotes alike). */
export function checkQuotedMembers<T>(quoteId: string, members: readonly QuotedMember<T>[], quote: T, purchase: T): void {
  for (const { field, of } of members) {
    if (of(purchase) !== of(quote)) {
      throw invalidRequest(
        `${field} (${JSON.stringify(of(purchase))}) differs from quote ${quoteId} (${JSON.stringify(of(quote))}); send the quote's ${field} or leave out quote_id`,
        { field },
      );
    }
  }
}

/** A quote's price once its members matched: 409 quote_expired (older than 10 minutes), then 409 invalid_state (used). */
export function quotedPrice(quote: { id: string; price: PricePair; amount: Money; expiresAt: Date; usedAt: Date | null }, now: Date): { price: PricePair; amount: Money } {
  if (now.getTime() > quote.expiresAt.getTime()) {
    throw new DomainError('quote_expired', `Quote ${quote.id} expired at ${quote.expiresAt.toISOString()} (quotes last 10 minutes); request a new one`);
  }
  if (quote.usedAt) throw invalidState(`Quote ${quote.id} was already used by a purchase at ${quote.usedAt.toISOString()}; request a new one`);
  return { price: { USD: quote.price.USD, IDR: quote.price.IDR }, amount: quote.amount };
}

