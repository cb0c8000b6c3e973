import { randomBytes } from 'node:crypto';
import http, { IncomingHttpHeaders } from 'node:http';
import { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { STRIPE_API_VERSION } from '../../src/modules/funding/infrastructure/stripe-payment-gateway';

/** The keys the tests give the app with PAYMENT_PROVIDER=stripe (their shapes are Stripe's; they open nothing). */
export const STRIPE_SECRET_KEY = 'sk_test_51LocalMockKey0000000000000000000000000000000000000000000000';
export const STRIPE_WEBHOOK_SECRET = 'whsec_1LocalMockSigningSecretForTheWebhookEndpoint00';

/** One request the SDK sent, as the mock received it. */
export interface StripeRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw body (application/x-www-form-urlencoded). */
  body: string;
  /** The query string, `?` included (empty when none). */
  query: string;
  /** The body's parameters, keys as Stripe's form encoding writes them (`line_items[0][price_data][unit_amount]`). */
  form: Record<string, string>;
}

/** An answer scripted for the next request instead of the mock's own: an error of Stripe's shape, or the answer lost after the request took effect. */
export type ScriptedAnswer =
  | { status: number; error: { type: string; code?: string; message: string; param?: string }; headers?: Record<string, string> }
  | { drop: 'after_effect' }
  /** The mock's own answer (to script the request after this one). */
  | { pass: true };

export type MockSession = Record<string, unknown> & { id: string; status: string; payment_status: string; amount_total: number; currency: string; client_reference_id: string | null };

const id = (prefix: string, n = 24) => `${prefix}${randomBytes(n).toString('base64url').replace(/[-_]/g, 'x').slice(0, n)}`;

/**
 * A local server answering the Stripe API endpoints the adapter uses, with the shapes of Stripe's
 * API reference: POST /v1/checkout/sessions (Checkout Session objects; idempotency keys replayed
 * as Stripe replays them, or refused with idempotency_error for other parameters), GET
 * /v1/checkout/sessions/{id}, POST /v1/checkout/sessions/{id}/expire; errors
 * `{error: {type, code, message, param}}` with a Request-Id header. It records every request,
 * can script the next answers (4xx/429/5xx errors, an answer lost after the effect), plays the
 * customer (pay, let expire) and builds and signs events as Stripe does.
 */
export class StripeMock {
  readonly requests: StripeRequest[] = [];
  /** Stripe down: every request answers 503 api_error, marked not to be retried (Stripe-Should-Retry: false). */
  down = false;
  readonly sessions = new Map<string, MockSession>();
  /** Refunds made (POST /v1/refunds), by id, in order. */
  readonly refunds = new Map<string, Record<string, unknown> & { id: string; amount: number; payment_intent: string; status: string; metadata: Record<string, string> }>();
  private readonly script: ScriptedAnswer[] = [];
  private readonly replays = new Map<string, { body: string; status: number; answer: string }>();

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<StripeMock> {
    const server = http.createServer();
    const mock = new StripeMock(server);
    server.on('request', (req, res) => mock.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return mock;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** The next requests get these answers, one each, in order. */
  answerNext(...answers: ScriptedAnswer[]): void {
    this.script.push(...answers);
  }

  /** Every scripted answer not used yet is dropped. */
  clearScript(): void {
    this.script.length = 0;
  }

  /** The requests since `from` (an index into requests). */
  since(from: number): StripeRequest[] {
    return this.requests.slice(from);
  }

  session(id: string): MockSession {
    const s = this.sessions.get(id);
    if (!s) throw new Error(`the mock has no session ${id}`);
    return s;
  }

  /** The customer pays: the session complete (paid, or unpaid while an async payment settles), with its payment intent. */
  pay(sessionId: string, paymentStatus: 'paid' | 'unpaid' = 'paid'): MockSession {
    const s = this.session(sessionId);
    Object.assign(s, { status: 'complete', payment_status: paymentStatus, payment_intent: s.payment_intent ?? id('pi_3', 24), url: null });
    return s;
  }

  /** The session reached its expires_at at Stripe. */
  expire(sessionId: string): MockSession {
    return Object.assign(this.session(sessionId), { status: 'expired', url: null });
  }

  /** The Charge of a paid session's payment intent as a charge.refunded event carries it, its refunds listed (newest first). */
  refundedCharge(paymentIntent: string): object {
    const session = [...this.sessions.values()].find((s) => s.payment_intent === paymentIntent);
    if (!session) throw new Error(`the mock has no session paid by ${paymentIntent}`);
    const refunds = [...this.refunds.values()].filter((r) => r.payment_intent === paymentIntent).reverse();
    const refunded = refunds.filter((r) => r.status === 'succeeded').reduce((sum, r) => sum + r.amount, 0);
    return {
      id: `ch_${paymentIntent.slice(3)}`,
      object: 'charge',
      amount: session.amount_total,
      amount_captured: session.amount_total,
      amount_refunded: refunded,
      currency: session.currency,
      metadata: session.metadata ?? {},
      payment_intent: paymentIntent,
      refunded: refunded === session.amount_total,
      refunds: { object: 'list', data: refunds, has_more: false, total_count: refunds.length, url: `/v1/charges/ch_${paymentIntent.slice(3)}/refunds` },
      status: 'succeeded',
    };
  }

  /** An event as Stripe sends it: pretty-printed JSON, `data.object` the object as it is now. */
  event(type: string, object: object, eventId = id('evt_1', 24)): string {
    return JSON.stringify(
      {
        id: eventId,
        object: 'event',
        api_version: STRIPE_API_VERSION,
        created: Math.floor(Date.now() / 1000),
        data: { object },
        livemode: false,
        pending_webhooks: 1,
        request: { id: null, idempotency_key: null },
        type,
      },
      null,
      2,
    );
  }

  /** Stripe-Signature as Stripe computes it (the SDK's own test header: `t=…,v1=…`). */
  sign(body: string, t = Math.floor(Date.now() / 1000), secret = STRIPE_WEBHOOK_SECRET): string {
    return Stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp: t });
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const url = new URL(req.url ?? '/', 'http://x');
      const recorded: StripeRequest = { method: req.method ?? '', path: url.pathname, query: url.search, headers: req.headers, body, form: Object.fromEntries(new URLSearchParams(body)) };
      this.requests.push(recorded);
      const send = (status: number, payload: object, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', 'request-id': id('req_', 14), 'stripe-version': String(req.headers['stripe-version'] ?? ''), ...headers });
        res.end(JSON.stringify(payload, null, 2));
      };
      if (req.headers.authorization !== `Bearer ${STRIPE_SECRET_KEY}`) {
        return send(401, { error: { message: 'Invalid API Key provided: sk_test_****0000', type: 'invalid_request_error' } });
      }
      if (this.down) return send(503, { error: { type: 'api_error', message: 'Stripe is temporarily unavailable.' } }, { 'stripe-should-retry': 'false' });
      const scripted = this.script.shift();
      if (scripted && 'status' in scripted) return send(scripted.status, { error: { ...scripted.error, doc_url: `https://stripe.com/docs/error-codes/${scripted.error.code ?? 'unknown'}` } }, scripted.headers);
      const answer = this.answer(recorded);
      if (scripted && 'drop' in scripted) {
        // The request took effect; its answer is lost on the way back.
        req.socket.destroy();
        return;
      }
      send(answer.status, answer.body, answer.headers);
    });
  }

  /** The mock's own answer (the effect applied): Stripe's idempotency first, then the endpoint. */
  private answer(r: StripeRequest): { status: number; body: object; headers?: Record<string, string> } {
    const key = r.headers['idempotency-key'];
    if (r.method === 'POST' && typeof key === 'string') {
      const seen = this.replays.get(key);
      if (seen && seen.body !== r.body) {
        return {
          status: 400,
          body: { error: { type: 'idempotency_error', message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.` } },
        };
      }
      if (seen) return { status: seen.status, body: JSON.parse(seen.answer), headers: { 'idempotent-replayed': 'true', 'original-request': 'req_original' } };
      const fresh = this.route(r);
      // Stripe keeps the result of a request that began executing (not a refusal of its parameters).
      if (fresh.status < 400 || fresh.status >= 500) this.replays.set(key, { body: r.body, status: fresh.status, answer: JSON.stringify(fresh.body) });
      return fresh;
    }
    return this.route(r);
  }

  private route(r: StripeRequest): { status: number; body: object } {
    const invalid = (message: string, param?: string, code = 'parameter_invalid') => ({ status: 400, body: { error: { type: 'invalid_request_error', code, message, ...(param ? { param } : {}) } } });
    const missing = (sid: string) => ({ status: 404, body: { error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such checkout.session: '${sid}'`, param: 'session' } } });
    if (r.method === 'POST' && r.path === '/v1/checkout/sessions') {
      const f = r.form;
      if (f.mode !== 'payment') return invalid('Missing required param: mode.', 'mode', 'parameter_missing');
      const unit = f['line_items[0][price_data][unit_amount]'];
      if (!/^\d+$/.test(unit ?? '')) return invalid('Invalid integer: ' + unit, 'line_items[0][price_data][unit_amount]', 'parameter_invalid_integer');
      const now = Math.floor(Date.now() / 1000);
      const expiresAt = Number(f.expires_at ?? now + 86_400);
      if (expiresAt < now + 1800 || expiresAt > now + 86_400) return invalid('The `expires_at` timestamp must be between 30 minutes and 24 hours from Checkout Session creation.', 'expires_at');
      if (!f.success_url) return invalid('Missing required param: success_url.', 'success_url', 'parameter_missing');
      const sid = id('cs_test_a1', 56);
      const metadata = Object.fromEntries(Object.entries(f).filter(([k]) => k.startsWith('metadata[')).map(([k, v]) => [k.slice(9, -1), v]));
      const amount = Number(unit) * Number(f['line_items[0][quantity]'] ?? 1);
      const session: MockSession = {
        id: sid,
        object: 'checkout.session',
        amount_subtotal: amount,
        amount_total: amount,
        cancel_url: f.cancel_url ?? null,
        client_reference_id: f.client_reference_id ?? null,
        created: now,
        currency: f['line_items[0][price_data][currency]'],
        customer: null,
        customer_creation: 'if_required',
        customer_details: null,
        expires_at: expiresAt,
        livemode: false,
        metadata,
        mode: 'payment',
        payment_intent: null,
        payment_status: 'unpaid',
        status: 'open',
        success_url: f.success_url,
        ui_mode: 'hosted',
        url: `https://checkout.stripe.com/c/pay/${sid}#fidkdWxOYHwnPyd1blpxYHZxWjA0T2R8`,
      };
      this.sessions.set(sid, session);
      return { status: 200, body: session };
    }
    if (r.method === 'POST' && r.path === '/v1/refunds') {
      const f = r.form;
      const session = [...this.sessions.values()].find((s) => s.payment_intent === f.payment_intent);
      if (!session) return { status: 400, body: { error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such payment_intent: '${f.payment_intent}'`, param: 'payment_intent' } } };
      const done = [...this.refunds.values()].filter((x) => x.payment_intent === f.payment_intent && x.status !== 'failed').reduce((sum, x) => sum + x.amount, 0);
      const amount = f.amount === undefined ? session.amount_total - done : Number(f.amount);
      if (!Number.isSafeInteger(amount) || amount <= 0) return invalid('Invalid positive integer', 'amount', 'parameter_invalid_integer');
      if (done >= session.amount_total) return invalid(`Charge for payment intent ${f.payment_intent} has already been refunded.`, undefined, 'charge_already_refunded');
      if (done + amount > session.amount_total) return invalid(`Refund amount (${amount}) is greater than unrefunded amount on charge (${session.amount_total - done})`, 'amount', 'amount_too_large');
      const metadata = Object.fromEntries(Object.entries(f).filter(([k]) => k.startsWith('metadata[')).map(([k, v]) => [k.slice(9, -1), v]));
      const refund = {
        id: id('re_3', 24),
        object: 'refund',
        amount,
        balance_transaction: id('txn_3', 24),
        charge: `ch_${f.payment_intent.slice(3)}`,
        created: Math.floor(Date.now() / 1000),
        currency: session.currency,
        metadata,
        payment_intent: f.payment_intent,
        reason: f.reason ?? null,
        status: 'succeeded',
      };
      this.refunds.set(refund.id, refund);
      return { status: 200, body: refund };
    }
    if (r.method === 'GET' && r.path === '/v1/refunds') {
      const pi = new URL(`http://x${r.query}`).searchParams.get('payment_intent');
      const data = [...this.refunds.values()].filter((x) => !pi || x.payment_intent === pi).reverse();
      return { status: 200, body: { object: 'list', data, has_more: false, url: '/v1/refunds' } };
    }
    const one = /^\/v1\/checkout\/sessions\/([^/]+)(\/expire)?$/.exec(r.path);
    if (one) {
      const session = this.sessions.get(one[1]);
      if (!session) return missing(one[1]);
      if (r.method === 'GET' && !one[2]) return { status: 200, body: session };
      if (r.method === 'POST' && one[2]) {
        if (session.status !== 'open') return invalid('Only Checkout Sessions with a status in ["open"] can be expired.', undefined, 'checkout_session_not_open');
        return { status: 200, body: this.expire(session.id) };
      }
    }
    return { status: 404, body: { error: { type: 'invalid_request_error', message: `Unrecognized request URL (${r.method}: ${r.path}).` } } };
  }
}
