import { addMonthsClamped } from '../../../shared/kernel/clock/clock';
import { invalidState } from '../../../shared/kernel/errors/domain-error';
import { Currency, Money } from '../../../shared/kernel/money/money';
import { TermMonths, Volume, termPrice } from './volume';

/** What a renewal charges: `size_gb × price_per_gb_month[currency] × term_months` at the purchase price. */
export interface RenewalQuote {
  termMonths: TermMonths;
  amount: Money;
}

/** The volume's fields after a renewal succeeds. */
export interface RenewedTerms {
  termMonths: TermMonths;
  billing: Money;
  expiresAt: Date;
}

/** Whether the volume may be renewed at all: neither deleted nor being deleted. */
export function isRenewable(volume: Volume): boolean {
  return !volume.deletedAt && volume.status !== 'deleted' && volume.status !== 'deleting';
}

/** Whether the volume may be renewed at all (deleted or being deleted: 409 invalid_state). */
export function assertRenewable(volume: Volume): void {
  if (volume.deletedAt || volume.status === 'deleted') {
    throw invalidState(`Volume ${volume.id} is deleted and cannot be renewed`);
  }
  if (volume.status === 'deleting') {
    throw invalidState(`Volume ${volume.id} is being deleted and cannot be renewed`);
  }
}

/** The charge of renewing `volume` for `termMonths`; currency defaults to the volume's billing currency. */
export function quoteRenewal(volume: Volume, termMonths: TermMonths, currency?: Currency): RenewalQuote {
  assertRenewable(volume);
  return { termMonths, amount: termPrice(volume, currency ?? volume.billing.currency, termMonths) };
}

/**
 * The new term: `max(expires_at, now) + term_months` calendar months (a day the target month
 * lacks clamps to its last day); the billing becomes what this renewal charged.
 */
export function renewTerms(volume: Volume, quote: RenewalQuote, now: Date): RenewedTerms {
  assertRenewable(volume);
  const from = volume.expiresAt.getTime() > now.getTime() ? volume.expiresAt : now;
  return { termMonths: quote.termMonths, billing: quote.amount, expiresAt: addMonthsClamped(from, quote.termMonths) };
}
