import { isCurrency, Money } from '../../../shared/kernel/money/money';
import { JsonObject } from '../../operations/domain/operation';
import { RenewalQuote } from '../domain/renewal';
import { isTerm } from '../domain/volume';

/** How a volume.renew operation carries its quote in `params` (term, currency, amount as a decimal string). */
export const renewalParams = {
  write(quote: RenewalQuote): JsonObject {
    return { term_months: quote.termMonths, currency: quote.amount.currency, amount: quote.amount.format() };
  },
  read(params: JsonObject): RenewalQuote {
    const { term_months: term, currency, amount } = params;
    if (!isTerm(term) || !isCurrency(currency) || typeof amount !== 'string') {
      throw new Error(`volume.renew parameters are malformed: ${JSON.stringify(params)}`);
    }
    return { termMonths: term, amount: Money.parse(amount, currency) };
  },
};
