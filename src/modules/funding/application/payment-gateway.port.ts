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

export type PaymentEventKind = 'paid' | 'unpaid' | 'failed' | 'expired' | 'canceled' | 'other';

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
  /** Verifies the signature on the raw bytes, then parses; throws PaymentEventRefused. */
  abstract parseEvent(rawBody: Buffer, headers: Record<string, string | string[] | undefined>): PaymentEvent;
}
