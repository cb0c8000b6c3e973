import { Injectable, Logger } from '@nestjs/common';
import Stripe from 'stripe';
import { Settings } from '../../../shared/config/settings';
import { Clock } from '../../../shared/kernel/clock/clock';
import { DomainError } from '../../../shared/kernel/errors/domain-error';
import {
  CheckoutRequest,
  CheckoutSession,
  PaymentEvent,
  PaymentEventRefused,
  PaymentGateway,
  ProviderRefund,
  RefundRequest,
  SessionState,
} from '../application/payment-gateway.port';
import { SIGNATURE_TOLERANCE_S, verifyStripeSignature } from '../domain/stripe-signature';
import { fundingUnavailable, returnLocation } from '../domain/top-up';
import { PublicBaseUrl } from './public-base-url';
import { parseStripeEvent, refundState, toProviderAmount } from './stripe-events';

/** The Stripe API version every request names (Stripe-Version): the one the pinned SDK is typed for. */
export const STRIPE_API_VERSION = '2026-10-28.endive' satisfies Stripe.LatestApiVersion;

/** Retries of a failed request (a connection error, a 409, a 5xx), with the same idempotency key, after 0.5 s and 1 s or so. */
export const STRIPE_NETWORK_RETRIES = 2;

/** Stripe lets a Checkout Session expire 30 minutes to 24 hours after its creation. */
const STRIPE_MIN_EXPIRY_S = 30 * 60;
const STRIPE_MAX_EXPIRY_S = 24 * 60 * 60;
/** Room for the request's own time (retries included) and clock skew: Stripe measures from the session's creation. */
const EXPIRY_SLACK_S = 60;

/** The product name on the Checkout page and the receipt. */
export const LINE_ITEM_NAME = 'Wallet top-up';

/**
 * The session's expires_at: the top-up's expiry, moved into Stripe's window. A top-up expiring
 * sooner than Stripe allows keeps its own expiry; the expiry sweep then closes its session.
 */
export function stripeExpiresAt(expiresAt: Date, now: Date): number {
  const nowS = Math.floor(now.getTime() / 1000);
  const wanted = Math.ceil(expiresAt.getTime() / 1000);
  return Math.min(Math.max(wanted, nowS + STRIPE_MIN_EXPIRY_S + EXPIRY_SLACK_S), nowS + STRIPE_MAX_EXPIRY_S - EXPIRY_SLACK_S);
}

/** The idempotency key of a top-up's session: a create retried (by the SDK, or after a lost answer) opens it once. */
export const checkoutIdempotencyKey = (topUpId: string): string => `top-up-${topUpId}-checkout`;

/** Keys and signing secrets never reach a log, whatever a message carries. */
const redact = (text: string): string => text.replace(/\b(sk|rk|pk)_(test|live)_[A-Za-z0-9*]+/g, '$1_$2_[redacted]').replace(/\bwhsec_\S+/g, 'whsec_[redacted]');

/**
 * Stripe Checkout behind the PaymentGateway port, through Stripe's own SDK (pinned): a top-up is
 * a Checkout Session (`mode=payment`, one line item, `client_reference_id` = the top-up id),
 * created with an idempotency key derived from the top-up id; cancel expires the session; the
 * expiry sweep retrieves it; events arrive at POST /v1/payment-events/stripe, verified with the
 * SDK's `webhooks.constructEvent` and with this service's own verifier (funding.md's rules:
 * one `t`, at most 300 s either side of now). Every failure of a call (Stripe's error answers,
 * rate limits, its 5xx after the SDK's retries, the network) is funding_unavailable, logged with
 * Stripe's error type, code and request id, never with a key.
 */
@Injectable()
export class StripePaymentGateway extends PaymentGateway {
  readonly name = 'stripe';
  private readonly logger = new Logger('Stripe');
  private client?: Stripe;

  constructor(
    private readonly settings: Settings,
    private readonly clock: Clock,
    private readonly base: PublicBaseUrl,
  ) {
    super();
  }

  enabled(): boolean {
    return this.settings.paymentProvider === 'stripe';
  }

  /** The SDK client, made at the first call: STRIPE_API_URL (when set) gives its protocol, host and port. */
  private stripe(): Stripe {
    if (!this.enabled()) throw fundingUnavailable('Wallet top-ups are not available: no payment provider is configured');
    if (!this.client) {
      const api = this.settings.stripeApiUrl ? new URL(this.settings.stripeApiUrl) : undefined;
      this.client = new Stripe(this.settings.stripeSecretKey!, {
        apiVersion: STRIPE_API_VERSION,
        maxNetworkRetries: STRIPE_NETWORK_RETRIES,
        timeout: this.settings.stripeTimeoutMs,
        telemetry: false,
        appInfo: { name: 'Cloud Disk Service' },
        ...(api
          ? {
              protocol: api.protocol === 'https:' ? ('https' as const) : ('http' as const),
              host: api.hostname.replace(/^\[(.*)\]$/, '$1'),
              port: api.port || (api.protocol === 'https:' ? 443 : 80),
            }
          : {}),
      });
    }
    return this.client;
  }

  /** Runs one SDK call; any failure becomes funding_unavailable (logged with what Stripe said). */
  private async call<T>(operation: string, fn: (stripe: Stripe) => Promise<T>): Promise<T> {
    const stripe = this.stripe();
    try {
      return await fn(stripe);
    } catch (err) {
      throw this.unavailable(operation, err);
    }
  }

  private unavailable(operation: string, err: unknown): DomainError {
    if (err instanceof DomainError) return err;
    const e = err instanceof Stripe.errors.StripeError ? err : undefined;
    const entry = {
      msg: 'Stripe call failed: top-ups answer funding_unavailable',
      operation,
      type: e?.type ?? (err instanceof Error ? err.name : 'unknown'),
      code: e?.code ?? null,
      status: e?.statusCode ?? null,
      request_id: e?.requestId ?? null,
      message: redact(err instanceof Error ? err.message : String(err)).slice(0, 500),
    };
    // A key Stripe refuses, or a request it finds invalid, is the operator's to fix; rate limits, Stripe's own errors and the network pass.
    if (e && ['StripeAuthenticationError', 'StripePermissionError', 'StripeInvalidRequestError', 'StripeIdempotencyError'].includes(e.type)) this.logger.error(entry);
    else this.logger.warn(entry);
    return fundingUnavailable();
  }

  async createCheckout(request: CheckoutRequest): Promise<CheckoutSession> {
    const { topUpId, orgId, amount, returnUrl } = request;
    const back = (outcome: 'paid' | 'canceled') =>
      returnUrl ? returnLocation(returnUrl, topUpId, outcome) : returnLocation(`${this.base.value()}/checkout/complete`, topUpId, outcome);
    const params: Stripe.Checkout.SessionCreateParams = {
      mode: 'payment',
      line_items: [
        {
          quantity: 1,
          price_data: { currency: amount.currency.toLowerCase(), unit_amount: Number(toProviderAmount(amount.currency, amount.minor)), product_data: { name: LINE_ITEM_NAME } },
        },
      ],
      client_reference_id: topUpId,
      metadata: { top_up_id: topUpId, org_id: orgId },
      payment_intent_data: { metadata: { top_up_id: topUpId, org_id: orgId } },
      success_url: back('paid'),
      cancel_url: back('canceled'),
      expires_at: stripeExpiresAt(request.expiresAt, this.clock.now()),
    };
    const session = await this.call('checkout.sessions.create', (stripe) => stripe.checkout.sessions.create(params, { idempotencyKey: checkoutIdempotencyKey(topUpId) }));
    if (!session.url) throw this.unavailable('checkout.sessions.create', new Error(`Checkout Session ${session.id} came back without a url`));
    return { sessionId: session.id, checkoutUrl: session.url };
  }

  async cancelCheckout(sessionId: string): Promise<'canceled' | 'already_paid'> {
    try {
      await this.stripe().checkout.sessions.expire(sessionId);
      return 'canceled';
    } catch (err) {
      // Stripe expires only open sessions: any other (paid, expired, unknown) is refused, and its state decides.
      if (!(err instanceof Stripe.errors.StripeInvalidRequestError)) throw this.unavailable('checkout.sessions.expire', err);
    }
    const state = await this.retrieve(sessionId);
    return state === 'paid' || state === 'processing' ? 'already_paid' : 'canceled';
  }

  async retrieve(sessionId: string): Promise<SessionState> {
    let session: Stripe.Checkout.Session;
    try {
      session = await this.stripe().checkout.sessions.retrieve(sessionId);
    } catch (err) {
      if (err instanceof Stripe.errors.StripeInvalidRequestError && err.statusCode === 404) return 'expired';
      throw this.unavailable('checkout.sessions.retrieve', err);
    }
    if (session.status === 'open') return 'open';
    if (session.status === 'complete') return session.payment_status === 'unpaid' ? 'processing' : 'paid';
    return 'expired';
  }

  /** The payment intent of a paid session (refunds are made on it); null when the session has none (never paid) or is unknown. */
  private async paymentIntentOf(sessionId: string): Promise<string | null> {
    let session: Stripe.Checkout.Session;
    try {
      session = await this.stripe().checkout.sessions.retrieve(sessionId);
    } catch (err) {
      if (err instanceof Stripe.errors.StripeInvalidRequestError && err.statusCode === 404) return null;
      throw this.unavailable('checkout.sessions.retrieve', err);
    }
    const pi = session.payment_intent;
    return typeof pi === 'string' ? pi : (pi?.id ?? null);
  }

  private static refundAnswer(refund: Stripe.Refund): ProviderRefund {
    const state = refundState(refund.status ?? 'pending');
    return { providerRefundId: refund.id, state, failureReason: state === 'failed' ? (refund.failure_reason ?? (refund.status === 'canceled' ? 'canceled' : 'refund_failed')) : null };
  }

  /**
   * `POST /v1/refunds` on the session's payment intent, the amount in Stripe's smallest unit,
   * with Idempotency-Key = the refund id (a retry, by the SDK or after a lost answer, makes one
   * refund) and the refund id in its metadata (how retrieveRefund finds it after Stripe forgets
   * the key, 24 hours on). Stripe refusing the request itself (nothing left to refund, more than
   * the charge, no payment) is a refusal for good: `failed` with Stripe's code.
   */
  async refund(request: RefundRequest): Promise<ProviderRefund> {
    const paymentIntent = await this.paymentIntentOf(request.sessionId);
    if (!paymentIntent) return { providerRefundId: null, state: 'failed', failureReason: 'charge_not_paid' };
    const params: Stripe.RefundCreateParams = {
      payment_intent: paymentIntent,
      amount: Number(toProviderAmount(request.amount.currency, request.amount.minor)),
      reason: 'requested_by_customer',
      metadata: { refund_id: request.refundId, top_up_id: request.topUpId, org_id: request.orgId },
    };
    try {
      return StripePaymentGateway.refundAnswer(await this.stripe().refunds.create(params, { idempotencyKey: request.refundId }));
    } catch (err) {
      if (err instanceof Stripe.errors.StripeInvalidRequestError && err.type === 'StripeInvalidRequestError' && (err.statusCode === 400 || err.statusCode === 404)) {
        this.logger.warn({ msg: 'Stripe refused the refund', refund_id: request.refundId, code: err.code ?? null, request_id: err.requestId ?? null });
        return { providerRefundId: null, state: 'failed', failureReason: (err.code ?? 'refund_refused').slice(0, 100) };
      }
      throw this.unavailable('refunds.create', err);
    }
  }

  /** The refund Stripe made under this refund id: the payment intent's refunds, matched on metadata.refund_id. */
  async retrieveRefund(request: RefundRequest): Promise<ProviderRefund | null> {
    const paymentIntent = await this.paymentIntentOf(request.sessionId);
    if (!paymentIntent) return null;
    const found = await this.call('refunds.list', async (stripe) => {
      for await (const refund of stripe.refunds.list({ payment_intent: paymentIntent, limit: 100 })) {
        if (refund.metadata?.refund_id === request.refundId) return refund;
      }
      return null;
    });
    return found && StripePaymentGateway.refundAnswer(found);
  }

  parseEvent(rawBody: Buffer, headers: Record<string, string | string[] | undefined>): PaymentEvent {
    const header = headers['stripe-signature'];
    const secret = this.settings.stripeWebhookSecret!;
    const now = this.clock.now().getTime();
    let sdk = false;
    if (typeof header === 'string') {
      try {
        this.stripe().webhooks.constructEvent(rawBody, header, secret, SIGNATURE_TOLERANCE_S, undefined, now);
        sdk = true;
      } catch (err) {
        // Verified, then not JSON: the body's refusal below names it.
        sdk = err instanceof SyntaxError;
      }
    }
    // Both must accept: the SDK (Stripe's scheme as Stripe maintains it) and funding.md's rules (one t, within 300 s either side).
    if (!sdk || typeof header !== 'string' || !verifyStripeSignature(header, rawBody, secret, Math.floor(now / 1000))) {
      throw new PaymentEventRefused('bad_signature', 'Stripe-Signature', 'Stripe-Signature does not sign this body with the webhook secret within 300 seconds of now');
    }
    return parseStripeEvent(rawBody, { foreignSessionsIgnored: true });
  }
}
