import { isCurrency, Money } from '../../../shared/kernel/money/money';
import { JsonObject } from '../../operations/domain/operation';
import { RenewalQuote, isTerm } from '../domain/term';

/**
 * How a renewal operation (volume.renew, vm.renew, and those of the resources to come) carries
 * its quote in `params`: the term, the currency and the amount as a decimal string. Never shown
 * to callers.
 */
export const renewalParams = {
  write(quote: RenewalQuote): JsonObject {
    return { term_months: quote.termMonths, currency: quote.amount.currency, amount: quote.amount.format() };
  },
  /** The quote back; `type` names the operation type in the error of malformed params. */
  read(params: JsonObject, type = 'volume.renew'): RenewalQuote {
    const { term_months: term, currency, amount } = params;
    if (!isTerm(term) || !isCurrency(currency) || typeof amount !== 'string') {
      throw new Error(`${type} parameters are malformed: ${JSON.stringify(params)}`);
    }
    return { termMonths: term, amount: Money.parse(amount, currency) };
  },
};
