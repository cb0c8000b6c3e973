import { addMonthsClamped } from '../../../shared/kernel/clock/clock';
import { Currency, Money, PricePair, formatPricePair } from '../../../shared/kernel/money/money';
import { Labels } from './labels';

/**
 * The prepaid term every resource sold here shares (disks, servers, and the resources to come):
 * bought or renewed for 1, 3 or 12 months at a monthly price frozen at purchase, paid from the
 * wallet until `expires_at`.
 */

export const RENEWAL_TERMS = [1, 3, 12] as const;
export type TermMonths = (typeof RENEWAL_TERMS)[number];

export function isTerm(value: unknown): value is TermMonths {
  return typeof value === 'number' && (RENEWAL_TERMS as readonly number[]).includes(value);
}

/**
 * The price of `termMonths` months: `price_per_month[currency] × units × term_months`, exact
 * (`units`: how many the monthly price is for, such as a disk's GB; 1 for a server).
 */
export function termAmount(pricePerMonth: PricePair, currency: Currency, termMonths: number, units = 1): Money {
  return pricePerMonth[currency].times(units).times(termMonths);
}

/** What a renewal charges: the term and its price in the chosen currency. */
export interface RenewalQuote {
  termMonths: TermMonths;
  amount: Money;
}

/** A resource's term after a renewal succeeds. */
export interface RenewedTerms {
  termMonths: TermMonths;
  billing: Money;
  expiresAt: Date;
}

/**
 * The new expiry of a renewal: `max(expires_at, now) + term_months` calendar months (a day the
 * target month lacks clamps to its last day): time left is kept, time lapsed is not charged.
 */
export function renewedExpiry(expiresAt: Date | null, now: Date, termMonths: number): Date {
  const from = expiresAt && expiresAt.getTime() > now.getTime() ? expiresAt : now;
  return addMonthsClamped(from, termMonths);
}

/** The term after renewing with `quote` at `now`: the new expiry, and the billing the renewal charged. */
export function renewedTerms(expiresAt: Date | null, quote: RenewalQuote, now: Date): RenewedTerms {
  return { termMonths: quote.termMonths, billing: quote.amount, expiresAt: renewedExpiry(expiresAt, now, quote.termMonths) };
}

/** Why a resource was deleted (terms.md): its owner, the end of its term, or its purchase failing. */
export const DELETED_REASONS = ['customer', 'expired', 'purchase_failed'] as const;
export type DeletedReason = (typeof DELETED_REASONS)[number];

/** The month a change's price is prorated on: 30 days, in seconds. */
export const PRORATION_MONTH_SECONDS = 30n * 24n * 60n * 60n;

/** Whole seconds from `now` to `expiresAt` (0 once it has passed). */
export function remainingSeconds(expiresAt: Date, now: Date): bigint {
  const ms = expiresAt.getTime() - now.getTime();
  return ms <= 0 ? 0n : BigInt(Math.floor(ms / 1000));
}

/**
 * What a change costs for the rest of a term (a disk grown, a plan changed): `monthly × r`, where
 * r = (expires_at − now) / 30 days in seconds, rounded up to the currency's minor unit. Exact
 * bigint arithmetic; nothing when the term has ended or the monthly difference is not positive.
 */
export function proratedCharge(monthly: Money, expiresAt: Date, now: Date): Money {
  if (monthly.minor <= 0n) return Money.zero(monthly.currency);
  const numerator = monthly.minor * remainingSeconds(expiresAt, now);
  const minor = (numerator + PRORATION_MONTH_SECONDS - 1n) / PRORATION_MONTH_SECONDS;
  return Money.ofMinor(monthly.currency, minor);
}

/** What presentTerm reads of a prepaid resource (a snapshot, a server image, a reserved address). */
export interface PrepaidTermView {
  termMonths: TermMonths;
  /** The current term's currency and amount. */
  billing: Money;
  /** The monthly price frozen at purchase (a snapshot's and a server image's: per GB-month). */
  price: PricePair;
  expiresAt: Date;
  autoRenew: { enabled: boolean; termMonths: TermMonths | null };
  labels: Labels;
  createdAt: Date;
  suspendedAt: Date | null;
  releaseAt: Date | null;
}

/** The members a prepaid resource's row holds beside its own (a snapshot, a server image, a reserved address). */
export interface PrepaidTerm extends PrepaidTermView {
  /** Its unfinished operation, or null. */
  operationId: string | null;
}

/**
 * The term of a prepaid resource bought at `now` (its row written with its purchase): `termMonths`
 * at the monthly `price` frozen, `billing` charged, `expires_at` = now + term (counted again
 * when the purchase succeeds), automatic renewal off, `operationId` its purchase.
 */
export function purchasedTerm(
  termMonths: TermMonths, billing: Money, price: PricePair, labels: Labels, operationId: string, now: Date,
): Omit<PrepaidTerm, 'suspendedAt' | 'releaseAt'> {
  return {
    termMonths, billing, price, expiresAt: addMonthsClamped(now, termMonths), autoRenew: { enabled: false, termMonths: null }, labels, operationId, createdAt: now,
  };
}

/**
 * A prepaid resource's term as its JSON shows it, in this order: term_months, billing, its price
 * under `priceKey` (price_per_month, price_per_gb_month), expires_at, auto_renew, labels,
 * created_at, suspended_at, release_at.
 */
export function presentTerm<K extends string>(c: PrepaidTermView, priceKey: K) {
  return {
    term_months: c.termMonths,
    billing: { currency: c.billing.currency, amount: c.billing.format() },
    ...({ [priceKey]: formatPricePair(c.price) } as Record<K, ReturnType<typeof formatPricePair>>),
    expires_at: c.expiresAt.toISOString(),
    auto_renew: { enabled: c.autoRenew.enabled, term_months: c.autoRenew.termMonths },
    labels: { ...c.labels },
    created_at: c.createdAt.toISOString(),
    suspended_at: c.suspendedAt ? c.suspendedAt.toISOString() : null,
    release_at: c.releaseAt ? c.releaseAt.toISOString() : null,
  };
}
