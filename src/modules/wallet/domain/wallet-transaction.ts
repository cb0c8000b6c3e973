import { invalidRequest } from '../../../shared/kernel/errors/domain-error';
import { Currency, Money, isCurrency } from '../../../shared/kernel/money/money';

export const TRANSACTION_TYPES = ['credit', 'hold', 'capture', 'release', 'adjustment', 'refund'] as const;
export type TransactionType = (typeof TRANSACTION_TYPES)[number];

/** One movement of the wallet (one ledger row), with the balance of its currency right after it. */
export interface WalletTransaction {
  id: string;
  type: TransactionType;
  currency: Currency;
  amount: Money;
  availableAfter: Money;
  reservedAfter: Money;
  /** Credits: `operator` (CLI, seed) or `top_up`; null for the other types. */
  source: 'operator' | 'top_up' | null;
  operationId: string | null;
  topUpId: string | null;
  /** What a customer reads on a statement, such as "Renewal of disk data-1 for 1 month". */
  description: string;
  createdAt: Date;
  /** Adjustments: credit or debit; refunds: debit. Absent for the other types. */
  direction?: 'credit' | 'debit';
  /** Adjustments and refunds: the reason staff gave, shown to the customer. */
  reason?: string | null;
  adjustmentId?: string | null;
  refundId?: string | null;
}

export interface WalletTransactionFilter {
  currency?: Currency;
  type?: TransactionType;
  since?: Date;
  until?: Date;
  operationId?: string;
  topUpId?: string;
}

/** Position in the organization's ledger (its `seq`). Opaque on the wire (base64url of `w1|seq`). */
export interface WalletTransactionCursor {
  seq: string;
}

const ID = /^[A-Za-z0-9_.-]{1,128}$/;
const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$/;
const CURSOR = /^w1\|([1-9]\d{0,18})$/;

export function encodeTransactionCursor(c: WalletTransactionCursor): string {
  return Buffer.from(`w1|${c.seq}`, 'utf8').toString('base64url');
}

export function decodeTransactionCursor(text: string): WalletTransactionCursor {
  const match = /^[A-Za-z0-9_-]{1,100}$/.test(text) ? CURSOR.exec(Buffer.from(text, 'base64url').toString('utf8')) : null;
  if (!match || BigInt(match[1]) > 9223372036854775807n) {
    throw invalidRequest('cursor is not a valid cursor; pass the next_cursor of a previous page', { field: 'cursor' });
  }
  return { seq: match[1] };
}

function instant(raw: string, field: string): Date {
  const date = new Date(raw);
  if (!ISO_8601.test(raw) || Number.isNaN(date.getTime()) || date.getUTCFullYear() < 1) {
    throw invalidRequest(`${field} must be an ISO 8601 timestamp with a zone such as 2026-11-21T10:00:00Z`, { field });
  }
  return date;
}

export interface WalletTransactionQuery {
  currency?: string;
  type?: string;
  since?: string;
  until?: string;
  operation_id?: string;
  top_up_id?: string;
}

/** The filters as sent (query strings): 400 naming the first bad parameter. */
export function parseTransactionFilter(input: WalletTransactionQuery): WalletTransactionFilter {
  const filter: WalletTransactionFilter = {};
  if (input.currency !== undefined) {
    if (!isCurrency(input.currency)) throw invalidRequest('currency must be USD or IDR', { field: 'currency' });
    filter.currency = input.currency;
  }
  if (input.type !== undefined) {
    if (!(TRANSACTION_TYPES as readonly string[]).includes(input.type)) {
      throw invalidRequest(`type must be one of ${TRANSACTION_TYPES.join(', ')}`, { field: 'type' });
    }
    filter.type = input.type as TransactionType;
  }
  if (input.since !== undefined) filter.since = instant(input.since, 'since');
  if (input.until !== undefined) filter.until = instant(input.until, 'until');
  for (const [field, key] of [['operation_id', 'operationId'], ['top_up_id', 'topUpId']] as const) {
    const value = input[field];
    if (value === undefined) continue;
    if (!ID.test(value)) throw invalidRequest(`${field} must be an id (1 to 128 of A-Z a-z 0-9 _ . -)`, { field });
    filter[key] = value;
  }
  return filter;
}
