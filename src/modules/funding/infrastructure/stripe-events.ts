import { Currency, isCurrency } from '../../../shared/kernel/money/money';
import { PaymentEvent, PaymentEventKind, PaymentEventRefused, RefundReport, RefundState } from '../application/payment-gateway.port';

/**
 * Stripe's shape of checkout events, shared by the simulated provider (which sends them) and the
 * Stripe adapter (which receives Stripe's own): amounts in Stripe's smallest unit, the body's
 * members, and what each checkout.session.* type means for a top-up.
 */

/** Stripe's amount: cents (USD minor units are 1e-5: ÷ 1000); IDR × 100, as Stripe counts rupiah two-decimal. */
export function toProviderAmount(currency: Currency, minor: bigint): bigint {
  return currency === 'USD' ? minor / 1000n : minor * 100n;
}

export function fromProviderAmount(currency: Currency, amount: bigint): bigint | null {
  if (currency === 'USD') return amount * 1000n;
  return amount % 100n === 0n ? amount / 100n : null;
}

const bad = (field: string, what: string) => new PaymentEventRefused('bad_body', field, `${field} ${what}`);
/** PostgreSQL text cannot hold NUL: a member the event is stored or looked up by must not contain one (a 500 the provider would retry forever). */
const refuseNul = (field: string, value: unknown): void => {
  if (typeof value === 'string' && value.includes('\u0000')) throw bad(field, 'must not contain NUL (\\u0000) characters');
};

export interface StripeEventOptions {
  /**
   * Stripe: a checkout.session.* event of a session this service did not open (no top-up id in
   * client_reference_id: another integration on the same account) is `other` (ignored), not a
   * 400 that Stripe would retry for days. The simulated provider opens only top-ups' sessions.
   */
  foreignSessionsIgnored?: boolean;
}

/** A Stripe-shaped event body (after its signature was verified): 400 naming the first member missing or mistyped. */
export function parseStripeEvent(rawBody: Buffer, options: StripeEventOptions = {}): PaymentEvent {
  let body: unknown;
  try {
    body = JSON.parse(rawBody.toString('utf8'));
  } catch {
    throw new PaymentEventRefused('bad_body', 'body', 'The event body is not valid JSON');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new PaymentEventRefused('bad_body', 'body', 'The event body must be a JSON object');
  const b = body as Record<string, unknown>;
  if (typeof b.id !== 'string' || b.id.length === 0 || b.id.length > 255) throw bad('id', 'must be a non-empty string');
  if (typeof b.type !== 'string' || b.type.length === 0 || b.type.length > 255) throw bad('type', 'must be a non-empty string');
  refuseNul('id', b.id);
  refuseNul('type', b.type);
  const none: PaymentEvent = { eventId: b.id, type: b.type, kind: 'other', sessionId: null, topUpId: null, amount: null, currency: null, failureReason: null };
  if (b.type === 'charge.refunded' || REFUND_EVENT_TYPES.includes(b.type)) return parseRefundEvent(b, none);
  if (!b.type.startsWith('checkout.session.')) return none;
  const data = b.data;
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw bad('data', 'must be an object');
  const o = (data as Record<string, unknown>).object;
  if (o === null || typeof o !== 'object' || Array.isArray(o)) throw bad('data.object', 'must be an object');
  const obj = o as Record<string, unknown>;
  for (const member of ['id', 'client_reference_id', 'currency', 'payment_status', 'failure_code']) refuseNul(`data.object.${member}`, obj[member]);
  if (options.foreignSessionsIgnored && !(typeof obj.client_reference_id === 'string' && obj.client_reference_id.startsWith('tu_'))) return none;
  for (const member of ['id', 'client_reference_id', 'currency', 'payment_status']) {
    if (typeof obj[member] !== 'string') throw bad(`data.object.${member}`, 'must be a string');
  }
  if (typeof obj.amount_total !== 'number' || !Number.isSafeInteger(obj.amount_total) || obj.amount_total < 0) {
    throw bad('data.object.amount_total', 'must be a non-negative integer');
  }
  if (obj.failure_code !== undefined && obj.failure_code !== null && typeof obj.failure_code !== 'string') throw bad('data.object.failure_code', 'must be a string');
  const upper = (obj.currency as string).toUpperCase();
  const currency = isCurrency(upper) && obj.currency === upper.toLowerCase() ? upper : null;
  const kind: PaymentEventKind =
    b.type === 'checkout.session.completed'
      ? obj.payment_status === 'paid'
        ? 'paid'
        : obj.payment_status === 'unpaid'
          ? 'unpaid'
          : 'other'
      : b.type === 'checkout.session.async_payment_succeeded'
        ? 'paid'
        : b.type === 'checkout.session.async_payment_failed'
          ? 'failed'
          : b.type === 'checkout.session.expired'
            ? 'expired'
            : b.type === 'checkout.session.canceled'
              ? 'canceled'
              : 'other';
  return {
    eventId: b.id,
    type: b.type,
    kind,
    sessionId: obj.id as string,
    topUpId: obj.client_reference_id as string,
    currency,
    amount: currency ? fromProviderAmount(currency, BigInt(obj.amount_total)) : null,
    failureReason: typeof obj.failure_code === 'string' && obj.failure_code.length > 0 ? obj.failure_code.slice(0, 100) : null,
  };
}

/** Stripe's events of a refund whose `data.object` is the Refund itself. */
const REFUND_EVENT_TYPES = ['refund.created', 'refund.updated', 'refund.failed'];

/** Stripe's refund statuses: `requires_action` and `pending` wait; `canceled` gave nothing back, as `failed`. */
export function refundState(status: string): RefundState {
  return status === 'succeeded' ? 'succeeded' : status === 'failed' || status === 'canceled' ? 'failed' : 'pending';
}

const object = (value: unknown): Record<string, unknown> | undefined =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
const metadataOf = (o: Record<string, unknown>, key: string): string | null => {
  const value = object(o.metadata)?.[key];
  return typeof value === 'string' && value.length > 0 && value.length <= 255 && !value.includes('\u0000') ? value : null;
};

/** One Refund object (Stripe's shape): 400 naming the member missing or mistyped. */
function refundReport(o: Record<string, unknown>, field: string): RefundReport {
  if (typeof o.id !== 'string' || o.id.length === 0 || o.id.length > 255) throw bad(`${field}.id`, 'must be a non-empty string');
  refuseNul(`${field}.id`, o.id);
  if (typeof o.amount !== 'number' || !Number.isSafeInteger(o.amount) || o.amount <= 0) throw bad(`${field}.amount`, 'must be a positive integer');
  if (typeof o.currency !== 'string') throw bad(`${field}.currency`, 'must be a string');
  if (typeof o.status !== 'string') throw bad(`${field}.status`, 'must be a string');
  const upper = o.currency.toUpperCase();
  const currency = isCurrency(upper) && o.currency === upper.toLowerCase() ? upper : null;
  const failure = typeof o.failure_reason === 'string' && o.failure_reason.length > 0 ? o.failure_reason.slice(0, 100) : null;
  const state = refundState(o.status);
  return {
    providerRefundId: o.id,
    refundId: metadataOf(o, 'refund_id'),
    state,
    amount: currency ? fromProviderAmount(currency, BigInt(o.amount)) : null,
    failureReason: state === 'failed' ? (failure ?? (o.status === 'canceled' ? 'canceled' : 'refund_failed')) : null,
  };
}

/**
 * charge.refunded (`data.object` a Charge; its `refunds.data` listed when the API version includes
 * them) and refund.created / updated / failed (`data.object` a Refund): the refunds they report,
 * each with this service's refund id from its metadata. An event of a charge or refund this
 * service did not make (no top-up or refund id in the metadata) is `other` when foreign objects are
 * ignored (Stripe: another integration on the same account).
 */
function parseRefundEvent(b: Record<string, unknown>, none: PaymentEvent): PaymentEvent {
  const data = object(b.data);
  if (!data) throw bad('data', 'must be an object');
  const o = object(data.object);
  if (!o) throw bad('data.object', 'must be an object');
  let refunds: RefundReport[];
  let raws: Record<string, unknown>[] = [o];
  if (b.type === 'charge.refunded') {
    const list = o.refunds === undefined || o.refunds === null ? undefined : object(o.refunds);
    if (o.refunds !== undefined && o.refunds !== null && !list) throw bad('data.object.refunds', 'must be a list object');
    const items = list?.data;
    if (list && !Array.isArray(items)) throw bad('data.object.refunds.data', 'must be an array');
    raws = ((items as unknown[] | undefined) ?? []).map((item, i) => {
      const r = object(item);
      if (!r) throw bad(`data.object.refunds.data.${i}`, 'must be an object');
      return r;
    });
    refunds = raws.map((r, i) => refundReport(r, `data.object.refunds.data.${i}`));
  } else {
    refunds = [refundReport(o, 'data.object')];
  }
  const topUpId = metadataOf(o, 'top_up_id') ?? raws.map((r) => metadataOf(r, 'top_up_id')).find((id) => id !== null) ?? null;
  if (!topUpId && refunds.every((r) => r.refundId === null)) return none;
  return { ...none, kind: 'refund', topUpId, refunds };
}
