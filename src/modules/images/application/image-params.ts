import { Currency, Money, isCurrency } from '../../../shared/kernel/money/money';
import { JsonObject } from '../../operations/domain/operation';
import { TermMonths, isTerm } from '../../prepaid/domain/term';

/** What an image operation's executor needs, stored in its params (`image_id` is also shown on the Operation). */
export interface ImageOpParams {
  imageId: string;
  serverId: string;
  termMonths: TermMonths | null;
  amount: Money | null;
}

export const imageParams = {
  write(p: ImageOpParams): JsonObject {
    return {
      image_id: p.imageId,
      server_id: p.serverId,
      term_months: p.termMonths,
      currency: p.amount?.currency ?? null,
      amount: p.amount ? p.amount.minor.toString() : null,
    };
  },
  read(params: JsonObject): ImageOpParams {
    const { image_id, server_id, term_months, currency, amount } = params;
    if (typeof image_id !== 'string' || typeof server_id !== 'string') throw new Error('image operation params name no image');
    const money = typeof amount === 'string' && isCurrency(currency) ? Money.ofMinor(currency as Currency, BigInt(amount)) : null;
    return { imageId: image_id, serverId: server_id, termMonths: isTerm(term_months) ? term_months : null, amount: money };
  },
};
