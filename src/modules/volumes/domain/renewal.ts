import { invalidState } from '../../../shared/kernel/errors/domain-error';
import { Currency } from '../../../shared/kernel/money/money';
import { RenewalQuote, RenewedTerms, TermMonths, renewedTerms } from '../../prepaid/domain/term';
import { Volume, termPrice } from './volume';

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

/** The charge of renewing `volume` for `termMonths` (`size_gb × price_per_gb_month[currency] × term_months` at the purchase price); currency defaults to the volume's billing currency. */
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
  return renewedTerms(volume.expiresAt, quote, now);
}
