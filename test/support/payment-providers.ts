import request from 'supertest';
import { Settings } from '../../src/shared/config/settings';
import { PAYMENT_SECRET, sessionEvent, signature } from './payments';
import { STRIPE_SECRET_KEY, STRIPE_WEBHOOK_SECRET, StripeMock } from './stripe-mock';
import { TestApp } from './test-app';

/** A session event's contents, amounts in the provider's units (cents; IDR × 100). */
export interface SessionEventFields {
  id: string;
  topUpId: string;
  amountTotal: number;
  currency: string;
  paymentStatus?: string;
  failureCode?: string;
}

/**
 * The payment provider a funding e2e file runs against: the simulated one, or the Stripe adapter
 * with the SDK pointed at a local StripeMock. The files run their stories once per provider
 * (describe.each(PAYMENT_PROVIDERS)); what only the simulator has (its checkout page) they run
 * for it alone.
 */
export interface ProviderUnderTest {
  name: 'simulated' | 'stripe';
  /** The Stripe run's local Stripe. */
  mock?: StripeMock;
  /** The other provider's name: its callback route 404s. */
  other: string;
  /** Starts what the provider needs; the settings the app takes. */
  start(): Promise<Partial<Settings>>;
  /** After the app started. */
  attach(t: TestApp): void;
  close(): Promise<void>;
  /** checkout_url as the provider makes it. */
  checkoutUrl: RegExp;
  /** Sessions the provider has opened so far. */
  sessions(): Promise<number>;
  /** A checkout.session.* event body as the provider sends it. */
  event(type: string, session: SessionEventFields, eventId?: string): string;
  /** Its Stripe-Signature, signed now (or at `t`) with the provider's webhook secret (or `secret`). */
  sign(body: string, t?: number, secret?: string): string;
  /** failure_reason after an async_payment_failed whose decline code was `code` (Stripe's session events carry none). */
  failureReason(code: string): string;
  /** The customer pays at the checkout; resolves once the app has answered the provider's paid event. */
  pay(topUp: { id: string; checkout_url: string }): Promise<void>;
  /** The customer has paid at the checkout; the provider's event has not arrived. */
  markPaid(topUpId: string): Promise<void>;
  /** The session is past its expiry at the provider (and the top-up past its own). */
  expire(topUpId: string): Promise<void>;
  /** The provider unreachable (every call fails) or back. */
  down(on: boolean): void;
}

const sessionOf = async (t: TestApp, topUpId: string) => (await t.sql<{ session_id: string }>(`SELECT session_id FROM top_ups WHERE id = $1`, [topUpId]))[0].session_id;
const pastExpiry = (t: TestApp, topUpId: string) => t.sql(`UPDATE top_ups SET expires_at = now() - interval '1 second' WHERE id = $1`, [topUpId]);

function simulated(): ProviderUnderTest {
  let t: TestApp;
  return {
    name: 'simulated',
    other: 'stripe',
    start: async () => ({ paymentProviderWebhookSecret: PAYMENT_SECRET }),
    attach: (app) => (t = app),
    close: async () => undefined,
    checkoutUrl: /^http:\/\/localhost:\d+\/checkout\/cs_sim_[A-Za-z0-9]{24}$/,
    sessions: async () => (await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM sim_checkout_sessions`))[0].n,
    event: (type, s, eventId) => sessionEvent(type, s, eventId),
    sign: (body, at, secret) => signature(body, at, secret),
    failureReason: (code) => code,
    async pay(topUp) {
      const res = await request(t.app.getHttpServer()).post(`${new URL(topUp.checkout_url).pathname}/pay`);
      expect([200, 303]).toContain(res.status);
    },
    async markPaid(topUpId) {
      await t.sql(`UPDATE sim_checkout_sessions SET status = 'paid' WHERE top_up_id = $1`, [topUpId]);
    },
    async expire(topUpId) {
      await pastExpiry(t, topUpId);
      await t.sql(`UPDATE sim_checkout_sessions SET expires_at = now() - interval '1 second' WHERE top_up_id = $1`, [topUpId]);
    },
    down(on) {
      t.settings.paymentProviderDown = on;
    },
  };
}

/** The Stripe adapter against a local StripeMock; `mock` is there once started. */
export function stripeProvider(): ProviderUnderTest & { mock: StripeMock } {
  let t: TestApp;
  const p: ProviderUnderTest & { mock: StripeMock } = {
    name: 'stripe',
    other: 'simulated',
    mock: undefined as unknown as StripeMock,
    async start() {
      p.mock = await StripeMock.start();
      // The SDK's timeout, short: a scripted lost answer is retried at once.
      return { paymentProvider: 'stripe', stripeSecretKey: STRIPE_SECRET_KEY, stripeWebhookSecret: STRIPE_WEBHOOK_SECRET, stripeApiUrl: p.mock.url, stripeTimeoutMs: 5000 };
    },
    attach: (app) => (t = app),
    close: async () => p.mock?.close(),
    checkoutUrl: /^https:\/\/checkout\.stripe\.com\/c\/pay\/cs_test_a1[A-Za-z0-9]{56}#fid[A-Za-z0-9]+$/,
    sessions: async () => p.mock.sessions.size,
    event(type, s, eventId) {
      const known = p.mock.sessions.get(s.id);
      const object = {
        ...(known ?? { id: s.id, object: 'checkout.session', status: 'complete' }),
        client_reference_id: s.topUpId,
        amount_total: s.amountTotal,
        currency: s.currency,
        payment_status: s.paymentStatus ?? 'paid',
      };
      return p.mock.event(type, object, eventId);
    },
    sign: (body, at, secret) => p.mock.sign(body, at, secret),
    failureReason: () => 'payment_failed',
    async pay(topUp) {
      const session = p.mock.pay(await sessionOf(t, topUp.id));
      const body = p.mock.event('checkout.session.completed', session);
      const res = await t.http.post('/v1/payment-events/stripe').set('Content-Type', 'application/json').set('Stripe-Signature', p.mock.sign(body)).send(body);
      expect(res.status).toBe(200);
    },
    async markPaid(topUpId) {
      p.mock.pay(await sessionOf(t, topUpId));
    },
    async expire(topUpId) {
      await pastExpiry(t, topUpId);
      p.mock.expire(await sessionOf(t, topUpId));
    },
    down(on) {
      p.mock.down = on;
    },
  };
  return p;
}

/** Both providers, for describe.each: `describe.each(paymentProviders())('… ($name)', (p) => …)`. */
export const paymentProviders = (): ProviderUnderTest[] => [simulated(), stripeProvider()];
