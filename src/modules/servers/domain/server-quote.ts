import { Currency, Money, PricePair } from '../../../shared/kernel/money/money';
import { QUOTE_TTL_MS, QuotedMember, checkQuotedMembers, quotedPrice } from '../../prepaid/domain/quote';
import { TermMonths, termAmount } from '../../prepaid/domain/term';

/** What a server purchase (or a server quote) asks for, as far as the price depends on it. */
export interface ServerOrderTerms {
  regionId: string;
  planId: string;
  termMonths: TermMonths;
  currency: Currency;
}

/** A server's price locked for 10 minutes (servers.md): `price_per_month[currency] × term_months`. */
export interface ServerQuote extends ServerOrderTerms {
  kind: 'server';
  id: string;
  orgId: string;
  price: PricePair;
  amount: Money;
  createdAt: Date;
  expiresAt: Date;
  usedAt: Date | null;
}

export function makeServerQuote(id: string, orgId: string, order: ServerOrderTerms, price: PricePair, now: Date): ServerQuote {
  return {
    kind: 'server',
    id,
    orgId,
    ...order,
    price: { USD: price.USD, IDR: price.IDR },
    amount: termAmount(price, order.currency, order.termMonths),
    createdAt: now,
    expiresAt: new Date(now.getTime() + QUOTE_TTL_MS),
    usedAt: null,
  };
}

const QUOTED: QuotedMember<ServerOrderTerms>[] = [
  { field: 'region', of: (o) => o.regionId },
  { field: 'plan', of: (o) => o.planId },
  { field: 'term_months', of: (o) => o.termMonths },
  { field: 'currency', of: (o) => o.currency },
];

/** 400 naming the first member of the purchase that differs from the quote. */
export function checkServerQuoteMatches(quote: ServerQuote, purchase: ServerOrderTerms): void {
  checkQuotedMembers(quote.id, QUOTED, quote, purchase);
}

/** The quote's price, or 409 quote_expired (older than 10 minutes), then 409 invalid_state (used). */
export function applyServerQuote(quote: ServerQuote, purchase: ServerOrderTerms, now: Date): { price: PricePair; amount: Money } {
  checkServerQuoteMatches(quote, purchase);
  return quotedPrice(quote, now);
}
