import { stripeSignatureHeader } from '../../src/modules/funding/domain/stripe-signature';

/** The webhook secret tests give the simulated provider, so that they can sign (and forge) its events. */
export const PAYMENT_SECRET = 'whsec_test_secret_for_simulated_provider_events';

let counter = 0;

/** A checkout.session.* event body as the simulated provider sends it (Stripe's shape); amounts in Stripe's units. */
export function sessionEvent(
  type: string,
  session: { id: string; topUpId: string; amountTotal: number; currency: string; paymentStatus?: string; failureCode?: string },
  eventId = `evt_sim_test${String(++counter).padStart(16, '0')}`,
): string {
  return JSON.stringify({
    id: eventId,
    object: 'event',
    type,
    created: Math.floor(Date.now() / 1000),
    data: {
      object: {
        id: session.id,
        object: 'checkout.session',
        client_reference_id: session.topUpId,
        amount_total: session.amountTotal,
        currency: session.currency,
        payment_status: session.paymentStatus ?? 'paid',
        status: 'complete',
        ...(session.failureCode ? { failure_code: session.failureCode } : {}),
      },
    },
  });
}

/** Stripe-Signature for `body` signed now (or at `t`) with `secret`. */
export const signature = (body: string, t = Math.floor(Date.now() / 1000), secret = PAYMENT_SECRET): string => stripeSignatureHeader(secret, t, body);
