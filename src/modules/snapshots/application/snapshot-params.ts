import { Currency, Money, isCurrency } from '../../../shared/kernel/money/money';
import { JsonObject } from '../../operations/domain/operation';
import { TermMonths, isTerm } from '../../prepaid/domain/term';

/** What a snapshot operation's executor needs, stored in its params (`snapshot_id` is also shown on the Operation). */
export interface SnapshotOpParams {
  snapshotId: string;
  volumeId: string;
  termMonths: TermMonths | null;
  amount: Money | null;
}

export const snapshotParams = {
  write(p: SnapshotOpParams): JsonObject {
    return {
      snapshot_id: p.snapshotId,
      volume_id: p.volumeId,
      term_months: p.termMonths,
      currency: p.amount?.currency ?? null,
      amount: p.amount ? p.amount.minor.toString() : null,
    };
  },
  read(params: JsonObject): SnapshotOpParams {
    const { snapshot_id, volume_id, term_months, currency, amount } = params;
    if (typeof snapshot_id !== 'string' || typeof volume_id !== 'string') throw new Error('snapshot operation params name no snapshot');
    const money = typeof amount === 'string' && isCurrency(currency) ? Money.ofMinor(currency as Currency, BigInt(amount)) : null;
    return { snapshotId: snapshot_id, volumeId: volume_id, termMonths: isTerm(term_months) ? term_months : null, amount: money };
  },
};
