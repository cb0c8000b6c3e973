import { DomainError, invalidRequest } from '../../../shared/kernel/errors/domain-error';
import { refuseUnknownMembers } from '../../../shared/kernel/errors/unknown-members';
import { Currency, Money, isCurrency } from '../../../shared/kernel/money/money';

export const TOP_UP_STATUSES = ['pending', 'succeeded', 'failed', 'canceled', 'expired', 'partially_refunded', 'refunded'] as const;
export type TopUpStatus = (typeof TOP_UP_STATUSES)[number];

/** The statuses of a top-up whose money was received (credited once): a refund moves it between them. */
export const PAID_TOP_UP_STATUSES: readonly TopUpStatus[] = ['succeeded', 'partially_refunded', 'refunded'];
export const isPaid = (status: TopUpStatus): boolean => PAID_TOP_UP_STATUSES.includes(status);

/** The status of a paid top-up once `refunded` of its `amount` was refunded. */
export const paidStatus = (amount: bigint, refunded: bigint): TopUpStatus => (refunded === 0n ? 'succeeded' : refunded >= amount ? 'refunded' : 'partially_refunded');

/** At most this many `pending` top-ups per organization. */
export const PENDING_TOP_UP_LIMIT = 5;

export interface TopUp {
  id: string;
  orgId: string;
  status: TopUpStatus;
  amount: Money;
  provider: string;
  sessionId: string;
  checkoutUrl: string;
  returnUrl: string | null;
  createdAt: Date;
  expiresAt: Date;
  updatedAt: Date;
  paidAt: Date | null;
  failureReason: string | null;
  /** What refunds took back (pending and succeeded ones): zero until a refund. */
  refundedAmount: Money;
}

/** Bounds of a top-up in minor units: USD 5.00000–10000.00000 in whole cents, IDR 10000–150000000. */
const BOUNDS: Record<Currency, { min: bigint; max: bigint; pattern: RegExp; text: string }> = {
  USD: { min: 500_000n, max: 1_000_000_000n, pattern: /^\d+(\.\d{1,5})?$/, text: 'a decimal string of whole cents from 5.00 to 10000.00, such as "25.00"' },
  IDR: { min: 10_000n, max: 150_000_000n, pattern: /^\d+$/, text: 'a string of whole rupiah from 10000 to 150000000, such as "150000"' },
};

export interface TopUpRequest {
  amount: Money;
  returnUrl: string | null;
}

/** POST /v1/wallet/top-ups's body: 400 naming the first bad member (currency, amount, return_url). */
export function parseTopUpRequest(body: unknown): TopUpRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw invalidRequest('Request body must be a JSON object', { field: 'body' });
  const b = body as Record<string, unknown>;
  refuseUnknownMembers(b, ['currency', 'amount', 'return_url']);
  if (b.currency === undefined || b.currency === null) throw invalidRequest('currency is required: USD or IDR', { field: 'currency' });
  if (typeof b.currency !== 'string' || !isCurrency(b.currency)) throw invalidRequest('currency must be USD or IDR', { field: 'currency' });
  const currency = b.currency;
  const bounds = BOUNDS[currency];
  if (b.amount === undefined || b.amount === null) throw invalidRequest(`amount is required: ${bounds.text}`, { field: 'amount' });
  if (typeof b.amount !== 'string') throw invalidRequest(`amount must be a string (no JSON numbers): ${bounds.text}`, { field: 'amount' });
  if (!bounds.pattern.test(b.amount)) throw invalidRequest(`amount must be ${bounds.text}`, { field: 'amount' });
  const amount = Money.parse(b.amount, currency, 'amount');
  // Cards charge whole cents: the last three of USD's five decimals must be zero.
  if (currency === 'USD' && amount.minor % 1000n !== 0n) throw invalidRequest(`amount must be ${bounds.text}`, { field: 'amount' });
  if (amount.minor < bounds.min || amount.minor > bounds.max) throw invalidRequest(`amount must be ${bounds.text}`, { field: 'amount' });
  return { amount, returnUrl: parseReturnUrl(b.return_url) };
}

const LOCAL_HOSTS = ['localhost', '127.0.0.1', '[::1]'];

function parseReturnUrl(raw: unknown): string | null {
  if (raw === undefined || raw === null) return null;
  const bad = (why: string) => invalidRequest(`return_url must be ${why}`, { field: 'return_url' });
  if (typeof raw !== 'string') throw bad('a string: an absolute https URL');
  if (raw.length > 2048) throw bad('at most 2048 characters');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw bad('an absolute https URL (http only on localhost)');
  }
  if (url.username || url.password) throw bad('a URL without user information');
  // A host of letters, digits, dots and hyphens (IDNs as the parser turns them into xn--), or an
  // IP literal: the checkout page names its origin in a Content-Security-Policy, where ; , * and '
  // would be syntax.
  if (!/^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])$/.test(url.hostname)) throw bad('a URL whose host has only letters, digits, dots and hyphens');
  const local = LOCAL_HOSTS.includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && local)) throw bad('an absolute https URL (http only on localhost)');
  return raw;
}

/** Where the customer lands after the checkout: return_url + `top_up_id=…&checkout=paid|canceled`. */
export function returnLocation(returnUrl: string, topUpId: string, outcome: 'paid' | 'canceled'): string {
  const url = new URL(returnUrl);
  url.searchParams.append('top_up_id', topUpId);
  url.searchParams.append('checkout', outcome);
  return url.toString();
}

export const topUpNotFound = (id: string): DomainError => new DomainError('not_found', `Top-up ${id} not found`);

export const topUpNotPending = (t: TopUp): DomainError =>
  new DomainError('invalid_state', `Top-up ${t.id} is ${t.status}; only a pending top-up can be canceled`, { status: t.status });

export const fundingUnavailable = (why = 'The hosted checkout is temporarily unavailable; try again later'): DomainError =>
  new DomainError('funding_unavailable', why);
