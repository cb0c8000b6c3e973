import { DomainError, invalidState } from '../../../shared/kernel/errors/domain-error';
import { Currency, Money, PricePair } from '../../../shared/kernel/money/money';
import { DeletedReason, PrepaidTerm, RenewalQuote, TermMonths, presentTerm, termAmount } from '../../prepaid/domain/term';

/**
 * A reserved IPv4 address: one address of its region's pool, held by an organization for a
 * prepaid term (`reserved_ipv4_price_per_month[currency] × term_months`), assignable to one of its
 * servers in that region at a time and kept when the server goes. Like a DigitalOcean reserved IP
 * or a Hetzner floating IP: reachable beside the server's own `ipv4`, moved between servers
 * without a new address.
 *
 * Statuses: `allocating` (the reservation accepted, its operation running), `available` (held,
 * assigned to nothing), `assigned`, `suspended` (its term ended: held but assigned to nothing until
 * renewed or released), `released` (back to the pool, after IP_COOLDOWN_S).
 */
export const RESERVED_IP_STATUSES = ['allocating', 'available', 'assigned', 'suspended', 'released'] as const;
export type ReservedIpStatus = (typeof RESERVED_IP_STATUSES)[number];

export interface ReservedIp extends PrepaidTerm {
  id: string;
  orgId: string;
  ip: string;
  regionId: string;
  status: ReservedIpStatus;
  /** The server it is assigned to (status `assigned`), else null. */
  serverId: string | null;
  /** The server an unfinished ip.reserve or ip.assign moves it to, else null. */
  pendingServerId: string | null;
  releasedAt: Date | null;
  releasedReason: DeletedReason | null;
}

export function presentReservedIp(r: ReservedIp) {
  return {
    id: r.id,
    ip: r.ip,
    region: r.regionId,
    server_id: r.serverId,
    status: r.status,
    ...presentTerm(r, 'price_per_month'),
    released_at: r.releasedAt ? r.releasedAt.toISOString() : null,
    released_reason: r.releasedReason,
  };
}

/** The price of a reservation for `termMonths`, exact. */
export function reservedIpAmount(price: PricePair, currency: Currency, termMonths: number): Money {
  return termAmount(price, currency, termMonths);
}

/** 409 invalid_state naming the reservation's unfinished operation. */
export function reservedIpBusy(r: ReservedIp): DomainError {
  return new DomainError('invalid_state', `Reserved IP ${r.id} has an unfinished operation ${r.operationId}; wait for it to end`, { operation_id: r.operationId });
}

/** 409 invalid_state with details.reason "suspended". */
export function reservedIpSuspended(r: ReservedIp, action: string): DomainError {
  return new DomainError('invalid_state', `Reserved IP ${r.id} is suspended (its term ended); renew it to ${action}`, { reason: 'suspended' });
}

/** A renewal's charge at the frozen price (409 invalid_state when allocating, released or busy). */
export function quoteReservedIpRenewal(r: ReservedIp, termMonths: TermMonths, currency?: Currency): RenewalQuote {
  if (r.status === 'released') throw invalidState(`Reserved IP ${r.id} is released and cannot be renewed`);
  if (r.status === 'allocating') throw invalidState(`Reserved IP ${r.id} is still being allocated; renew it once it is available`);
  if (r.operationId) throw reservedIpBusy(r);
  return { termMonths, amount: reservedIpAmount(r.price, currency ?? r.billing.currency, termMonths) };
}

/** 409 out_of_stock: the region's pool has no free address now. */
export function poolExhausted(regionId: string): DomainError {
  return new DomainError('out_of_stock', `Region ${regionId} has no free address to reserve now; retry later or choose another region`);
}

