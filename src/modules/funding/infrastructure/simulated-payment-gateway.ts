import { Injectable } from '@nestjs/common';
import { Settings } from '../../../shared/config/settings';
import { Db } from '../../../shared/database/transaction';
import { Clock } from '../../../shared/kernel/clock/clock';
import { randomBase62 } from '../../../shared/kernel/ids/ids';
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
import { SimulatedProviderSecret } from './simulated-provider-secret';
import { SimulatedRefunds } from './simulated-refunds';
import { PublicBaseUrl } from './public-base-url';
import { parseStripeEvent } from './stripe-events';
import { fundingUnavailable } from '../domain/top-up';
import { verifyStripeSignature } from '../domain/stripe-signature';

export { SimulatedProviderSecret };

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
    private readonly base: PublicBaseUrl,
    private readonly refunds: SimulatedRefunds,
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

  async createCheckout(request: CheckoutRequest): Promise<CheckoutSession> {
    this.available();
    const row = await this.db.one<{ id: string }>(
      `INSERT INTO sim_checkout_sessions (id, top_up_id, currency, amount, return_url, status, expires_at)
       VALUES ($1, $2, $3, $4, $5, 'open', $6)
       ON CONFLICT (top_up_id) DO UPDATE SET top_up_id = EXCLUDED.top_up_id
       RETURNING id`,
      [`cs_sim_${randomBase62(24)}`, request.topUpId, request.amount.currency, request.amount.minor.toString(), request.returnUrl, request.expiresAt],
    );
    return { sessionId: row!.id, checkoutUrl: `${this.base.value()}/checkout/${row!.id}` };
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

  async refund(request: RefundRequest): Promise<ProviderRefund> {
    this.available();
    return this.refunds.refund(request);
  }

  async retrieveRefund(request: RefundRequest): Promise<ProviderRefund | null> {
    this.available();
    return this.refunds.retrieve(request.refundId);
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
