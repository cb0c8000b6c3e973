import { randomBytes } from 'node:crypto';
import { Injectable, Optional } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { Settings } from '../../../shared/config/settings';
import { Db } from '../../../shared/database/transaction';
import { Clock } from '../../../shared/kernel/clock/clock';
import { randomBase62 } from '../../../shared/kernel/ids/ids';
import { Currency, isCurrency } from '../../../shared/kernel/money/money';
import {
  CheckoutRequest,
  CheckoutSession,
  PaymentEvent,
  PaymentEventKind,
  PaymentEventRefused,
  PaymentGateway,
  SessionState,
} from '../application/payment-gateway.port';
import { fundingUnavailable } from '../domain/top-up';
import { verifyStripeSignature } from '../domain/stripe-signature';

/** Stripe's amount_total: cents (USD minor units are 1e-5: ÷ 1000); IDR × 100, as Stripe counts rupiah. */
export function toProviderAmount(currency: Currency, minor: bigint): bigint {
  return currency === 'USD' ? minor / 1000n : minor * 100n;
}

export function fromProviderAmount(currency: Currency, amount: bigint): bigint | null {
  if (currency === 'USD') return amount * 1000n;
  return amount % 100n === 0n ? amount / 100n : null;
}

/** The secret the simulated provider signs with: PAYMENT_PROVIDER_WEBHOOK_SECRET, or random per process. */
@Injectable()
export class SimulatedProviderSecret {
  readonly value: string;
  constructor(settings: Settings) {
    this.value = settings.paymentProviderWebhookSecret ?? `whsec_${randomBytes(24).toString('base64')}`;
  }
}

/**
 * The simulated payment provider, Stripe Checkout's shape: sessions in its own table
 * (sim_checkout_sessions), a hosted page at /checkout/{session} (SimulatedCheckout), events
 * signed as Stripe signs them. PAYMENT_PROVIDER=off: every call is funding_unavailable (and the
 * page 404); PAYMENT_PROVIDER_DOWN=true: every call is funding_unavailable (and the page 503).
 */
@Injectable()
export class SimulatedPaymentGateway extends PaymentGateway {
  readonly name = 'simulated';

  constructor(
    private readonly db: Db,
    private readonly settings: Settings,
    private readonly clock: Clock,
    private readonly secret: SimulatedProviderSecret,
    @Optional() private readonly host?: HttpAdapterHost,
  ) {
    super();
  }

  enabled(): boolean {
    return this.settings.paymentProvider === 'simulated';
  }

  private available(): void {
    if (!this.enabled()) throw fundingUnavailable('Wallet top-ups are not available: no payment provider is configured');
    if (this.settings.paymentProviderDown) throw fundingUnavailable();
  }

  /** PUBLIC_BASE_URL, else this process on localhost at the port it listens on (PORT=0 picks one at start). */
  baseUrl(): string {
    if (this.settings.publicBaseUrl) return this.settings.publicBaseUrl;
    const address = this.host?.httpAdapter?.getHttpServer()?.address?.();
    const port = address && typeof address === 'object' && address.port ? address.port : this.settings.port;
    return `http://localhost:${port}`;
  }

  async createCheckout(request: CheckoutRequest): Promise<CheckoutSession> {
    this.available();
    const row = await this.db.one<{ id: string }>(
      `INSERT INTO sim_checkout_sessions (id, top_up_id, currency, amount, return_url, status, expires_at)
       VALUES ($1, $2, $3, $4, $5, 'open', $6)
       ON CONFLICT (top_up_id) DO UPDATE SET top_up_id = EXCLUDED.top_up_id
       RETURNING id`,
      [`cs_sim_${randomBase62(24)}`, request.topUpId, request.amount.currency, request.amount.minor.toString(), request.returnUrl, request.expiresAt],
    );
    return { sessionId: row!.id, checkoutUrl: `${this.baseUrl()}/checkout/${row!.id}` };
  }

  async cancelCheckout(sessionId: string): Promise<'canceled' | 'already_paid'> {
    this.available();
    const canceled = await this.db.query(
      `UPDATE sim_checkout_sessions SET status = 'canceled', updated_at = now() WHERE id = $1 AND status = 'open' RETURNING 1 AS canceled`,
      [sessionId],
    );
    if (canceled.length > 0) return 'canceled';
    const row = await this.db.one<{ status: string }>(`SELECT status FROM sim_checkout_sessions WHERE id = $1`, [sessionId]);
    return row?.status === 'paid' ? 'already_paid' : 'canceled';
  }

  async retrieve(sessionId: string): Promise<SessionState> {
    this.available();
    const row = await this.db.one<{ status: SessionState; expires_at: Date }>(`SELECT status, expires_at FROM sim_checkout_sessions WHERE id = $1`, [sessionId]);
    if (!row) return 'expired';
    if (row.status === 'open' && row.expires_at.getTime() <= this.clock.now().getTime()) return 'expired';
    return row.status;
  }

  parseEvent(rawBody: Buffer, headers: Record<string, string | string[] | undefined>): PaymentEvent {
    const header = headers['stripe-signature'];
    const nowS = Math.floor(this.clock.now().getTime() / 1000);
    if (typeof header !== 'string' || !verifyStripeSignature(header, rawBody, this.secret.value, nowS)) {
      throw new PaymentEventRefused('bad_signature', 'Stripe-Signature', 'Stripe-Signature does not sign this body with the webhook secret within 300 seconds of now');
    }
    return parseStripeEvent(rawBody);
  }
}

const bad = (field: string, what: string) => new PaymentEventRefused('bad_body', field, `${field} ${what}`);

/** A Stripe-shaped event body (after its signature was verified): 400 naming the first member missing or mistyped. */
export function parseStripeEvent(rawBody: Buffer): PaymentEvent {
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
  const none: PaymentEvent = { eventId: b.id, type: b.type, kind: 'other', sessionId: null, topUpId: null, amount: null, currency: null, failureReason: null };
  if (!b.type.startsWith('checkout.session.')) return none;
  const data = b.data;
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw bad('data', 'must be an object');
  const o = (data as Record<string, unknown>).object;
  if (o === null || typeof o !== 'object' || Array.isArray(o)) throw bad('data.object', 'must be an object');
  const obj = o as Record<string, unknown>;
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
