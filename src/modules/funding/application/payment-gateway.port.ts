import { Currency, Money } from '../../../shared/kernel/money/money';

export interface CheckoutRequest {
  topUpId: string;
  /** The organization paying (a real provider records it with the session, for the operator). */
  orgId: string;
  amount: Money;
  returnUrl: string | null;
  expiresAt: Date;
}

export interface CheckoutSession {
  sessionId: string;
  checkoutUrl: string;
}

/**
 * A session at the provider: `processing` when the customer finished the checkout with a payment
 * method that settles later (a bank debit): its paid or failed event decides.
 */
export type SessionState = 'open' | 'processing' | 'paid' | 'failed' | 'canceled' | 'expired';

export type PaymentEventKind = 'paid' | 'unpaid' | 'failed' | 'expired' | 'canceled' | 'refund' | 'other';

/** A refund's state at the provider: `pending` until the provider settles it (Stripe's `requires_action` included). */
export type RefundState = 'pending' | 'succeeded' | 'failed';

/** What the provider says of one refund (an answer to refund or retrieveRefund, or a refund event). */
export interface ProviderRefund {
  /** The provider's id of the refund; null when the provider refused to make one. */
  providerRefundId: string | null;
  state: RefundState;
  /** Why it failed (the provider's code), when failed. */
  failureReason: string | null;
}

/** One refund a refund event reports. */
export interface RefundReport extends ProviderRefund {
  /** This service's refund id (the refund's metadata), when the refund was made through the port. */
  refundId: string | null;
  /** In the service's minor units; null when the event's currency is not one of the service's. */
  amount: bigint | null;
}

/** A refund of (part of) a paid top-up, asked of the provider that took its payment. */
export interface RefundRequest {
  /** This service's refund id: the provider's idempotency key and the refund's metadata. */
  refundId: string;
  topUpId: string;
  orgId: string;
  /** The checkout session that took the payment. */
  sessionId: string;
  amount: Money;
}

/** A provider's event, verified and parsed. */
export interface PaymentEvent {
  eventId: string;
  type: string;
  kind: PaymentEventKind;
  sessionId: string | null;
  topUpId: string | null;
  /** In the service's minor units (the provider's are converted). */
  amount: bigint | null;
  currency: Currency | null;
  failureReason: string | null;
  /** `refund` events: the refunds they report (none when the event does not list them). */
  refunds?: RefundReport[];
}

/** parseEvent's refusal: a bad signature, or a body member missing or mistyped (`field` names it). */
export class PaymentEventRefused extends Error {
  constructor(
    readonly reason: 'bad_signature' | 'bad_body',
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A payment provider's hosted checkout (Stripe Checkout, Xendit invoices, Midtrans Snap; the
 * simulated one). Never called inside a database transaction. Every method may throw
 * DomainError funding_unavailable (the provider unreachable or switched off).
 */
export abstract class PaymentGateway {
  /** The provider's name, as in POST /v1/payment-events/{provider}. */
  abstract readonly name: string;
  /** Whether the provider is configured at all (PAYMENT_PROVIDER is not off). */
  abstract enabled(): boolean;
  /** Opens a checkout for the top-up; idempotent by topUpId (the same session again). */
  abstract createCheckout(request: CheckoutRequest): Promise<CheckoutSession>;
  /** Closes the session: `canceled`, or `already_paid` (its paid event will credit the top-up). */
  abstract cancelCheckout(sessionId: string): Promise<'canceled' | 'already_paid'>;
  /** The session's state at the provider. */
  abstract retrieve(sessionId: string): Promise<SessionState>;
  /**
   * Refunds `amount` of the session's payment; idempotent by refundId (a retried call, even after
   * a lost answer, makes one refund). A refusal the provider gives for good (nothing to refund,
   * more than what is left) answers `failed`; being unreachable throws funding_unavailable.
   */
  abstract refund(request: RefundRequest): Promise<ProviderRefund>;
  /** The refund made under refundId, as the provider knows it now; null when it has none. */
  abstract retrieveRefund(request: RefundRequest): Promise<ProviderRefund | null>;
  /** Verifies the signature on the raw bytes, then parses; throws PaymentEventRefused. */
  abstract parseEvent(rawBody: Buffer, headers: Record<string, string | string[] | undefined>): PaymentEvent;
}
