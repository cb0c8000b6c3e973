import { invalidRequest } from '../../../shared/kernel/errors/domain-error';
import { Currency, Money, PricePair } from '../../../shared/kernel/money/money';
import { VolumeOffer, VolumeType } from '../../options/domain/catalog';
import { QUOTE_TTL_MS, QuotedMember, checkQuotedMembers, quotedPrice } from '../../prepaid/domain/quote';
import { TermMonths, termAmount } from '../../prepaid/domain/term';

/** What a purchase (or a quote) asks for, as far as the price depends on it. */
export interface OrderTerms {
  regionId: string;
  type: VolumeType;
  sizeGb: number;
  termMonths: TermMonths;
  currency: Currency;
}

/**
 * The 400s a purchase gets from the region's offer (lifecycle.md "Buying"): a size outside
 * min_gb..max_gb or off the min_gb + k × step_gb grid, a term the offer does not sell.
 */
export function checkOrderAgainstOffer(offer: VolumeOffer, order: Pick<OrderTerms, 'sizeGb' | 'termMonths'>): void {
  const { minGb, maxGb, stepGb } = offer;
  if (order.sizeGb < minGb || order.sizeGb > maxGb || (order.sizeGb - minGb) % stepGb !== 0) {
    throw invalidRequest(
      `size_gb must be from ${minGb} to ${maxGb} in steps of ${stepGb} (${minGb}, ${minGb + stepGb}, ...) for ${offer.type} in ${offer.regionId}; got ${order.sizeGb}`,
      { field: 'size_gb' },
    );
  }
  if (!offer.terms.includes(order.termMonths)) {
    throw invalidRequest(
      `term_months must be one of the terms sold for ${offer.type} in ${offer.regionId}: ${[...offer.terms].sort((a, b) => a - b).join(', ')}`,
      { field: 'term_months' },
    );
  }
}

/** The purchase price: `size_gb × price_per_gb_month[currency] × term_months`, exact. */
export function orderAmount(price: PricePair, order: Pick<OrderTerms, 'sizeGb' | 'termMonths' | 'currency'>): Money {
  return termAmount(price, order.currency, order.termMonths, order.sizeGb);
}

/** A price locked for 10 minutes for one order; used once by a purchase. */
export interface Quote extends OrderTerms {
  id: string;
  /** A row of the quotes table of the other kind (a server quote) reads as `server`: a disk purchase refuses it (400 naming quote_id). */
  kind?: 'volume' | 'server';
  orgId: string;
  /** The offer's price when the quote was made, in both currencies (as frozen on a volume). */
  price: PricePair;
  /** `size_gb × price[currency] × term_months`. */
  amount: Money;
  createdAt: Date;
  expiresAt: Date;
  usedAt: Date | null;
}

/** A new quote for `order` at the offer's current price; 400 naming the member when the offer does not sell it. */
export function makeQuote(id: string, orgId: string, offer: VolumeOffer, order: OrderTerms, now: Date): Quote {
  checkOrderAgainstOffer(offer, order);
  return {
    id,
    orgId,
    ...order,
    price: { USD: offer.price.USD, IDR: offer.price.IDR },
    amount: orderAmount(offer.price, order),
    createdAt: now,
    expiresAt: new Date(now.getTime() + QUOTE_TTL_MS),
    usedAt: null,
  };
}

const QUOTED_MEMBERS: QuotedMember<OrderTerms>[] = [
  { field: 'region', of: (o) => o.regionId },
  { field: 'type', of: (o) => o.type },
  { field: 'size_gb', of: (o) => o.sizeGb },
  { field: 'term_months', of: (o) => o.termMonths },
  { field: 'currency', of: (o) => o.currency },
];

/** 400 naming the first member of a purchase with `quote_id` that differs from the quote (lifecycle.md "Quotes"). */
export function checkQuoteMatches(quote: Quote, purchase: OrderTerms): void {
  checkQuotedMembers(quote.id, QUOTED_MEMBERS, quote, purchase);
}

/**
 * The price a purchase with `quote_id` pays (lifecycle.md "Quotes"), or its error, in the
 * check order of lifecycle.md: a member of the purchase that differs from the quote is 400
 * naming it (checkQuoteMatches, which a purchase runs with its other 400s, before any 404); then
 * a quote older than 10 minutes 409 quote_expired; then one already used 409 invalid_state. The
 * caller has already found the quote in the organization (else 404).
 */
export function applyQuote(quote: Quote, purchase: OrderTerms, now: Date): { price: PricePair; amount: Money } {
  checkQuoteMatches(quote, purchase);
  return quotedPrice(quote, now);
}
