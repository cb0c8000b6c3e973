import { Currency, Money, isCurrency } from '../../../shared/kernel/money/money';
import { JsonObject } from '../../operations/domain/operation';
import { TermMonths, isTerm } from '../../prepaid/domain/term';

/** What an ip.* operation's executor needs, stored in its params (`reserved_ip_id` is also shown on the Operation). */
export interface ReservedIpOpParams {
  reservedIpId: string;
  ip: string;
  /** ip.reserve, ip.assign: the server it goes to; ip.unassign, ip.release: the server it leaves (null: none). */
  serverId: string | null;
  termMonths: TermMonths | null;
  amount: Money | null;
  /** ip.unassign by the term sweep: the reservation is suspended when it succeeds (`suspend_at`, `release_at`). */
  suspend: { at: Date; releaseAt: Date } | null;
  /** ip.release: why. */
  reason: 'customer' | 'expired' | null;
}

export const reservedIpParams = {
  write(p: ReservedIpOpParams): JsonObject {
    return {
      reserved_ip_id: p.reservedIpId,
      ip: p.ip,
      server_id: p.serverId,
      term_months: p.termMonths,
      currency: p.amount?.currency ?? null,
      amount: p.amount ? p.amount.minor.toString() : null,
      suspend_at: p.suspend ? p.suspend.at.toISOString() : null,
      release_at: p.suspend ? p.suspend.releaseAt.toISOString() : null,
      reason: p.reason,
    };
  },
  read(params: JsonObject): ReservedIpOpParams {
    const { reserved_ip_id, ip, server_id, term_months, currency, amount, suspend_at, release_at, reason } = params;
    if (typeof reserved_ip_id !== 'string' || typeof ip !== 'string') throw new Error('ip operation params name no reserved address');
    const money = typeof amount === 'string' && isCurrency(currency) ? Money.ofMinor(currency as Currency, BigInt(amount)) : null;
    return {
      reservedIpId: reserved_ip_id,
      ip,
      serverId: typeof server_id === 'string' ? server_id : null,
      termMonths: isTerm(term_months) ? term_months : null,
      amount: money,
      suspend: typeof suspend_at === 'string' && typeof release_at === 'string' ? { at: new Date(suspend_at), releaseAt: new Date(release_at) } : null,
      reason: reason === 'customer' || reason === 'expired' ? reason : null,
    };
  },
};
