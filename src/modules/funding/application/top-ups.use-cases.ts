import { Injectable, Logger } from '@nestjs/common';
import { Settings } from '../../../shared/config/settings';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { DomainError, invalidRequest } from '../../../shared/kernel/errors/domain-error';
import { newId } from '../../../shared/kernel/ids/ids';
import { Money, isCurrency } from '../../../shared/kernel/money/money';
import { decodeCursor, encodeCursor, parseLimit } from '../../../shared/kernel/pagination/cursor';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { Principal } from '../../auth/domain/principal';
import { Metrics } from '../../../shared/observability/metrics';
import {
  PENDING_TOP_UP_LIMIT,
  TOP_UP_STATUSES,
  TopUp,
  TopUpRequest,
  TopUpStatus,
  fundingUnavailable,
  isPaid,
  topUpNotFound,
  topUpNotPending,
} from '../domain/top-up';
import { CheckoutSession, PaymentEvent, PaymentEventRefused, PaymentGateway, SessionState } from './payment-gateway.port';
import { TopUpTransitions } from './top-up-transitions';
import { EventOutcome, TopUpFilter, TopUpStore } from './top-ups.port';
import { RefundOutcomes } from './refund-top-up.use-cases';
import { RefundStore } from './refunds.port';

export const pendingLimitReached = (): DomainError =>
  new DomainError('quota_exceeded', `At most ${PENDING_TOP_UP_LIMIT} top-ups may be pending at once; pay or cancel one first`, { limit: PENDING_TOP_UP_LIMIT });

/** A checkout opened for a top-up not yet written. */
export interface OpenedCheckout {
  id: string;
  createdAt: Date;
  expiresAt: Date;
  session: CheckoutSession;
}

/** Who acts, for the audit entry. */
export interface TopUpActor {
  principal: Principal;
  ip: string | null;
}

const actorOf = ({ principal, ip }: TopUpActor) =>
  principal.kind === 'api_key' ? { type: 'api_key' as const, id: principal.credentialId, ip } : { type: 'user' as const, id: principal.userId, ip };

/**
 * POST /v1/wallet/top-ups, in three parts the caller runs in order (funding.md): `pendingFull`
 * (a read: at the limit, the checkout is never opened), `openCheckout` (the provider, outside
 * any transaction), `insert` (in the idempotent transaction: the organization locked, counted
 * again, the top-up and its audit entry written).
 */
@Injectable()
export class CreateTopUp {
  private readonly logger = new Logger('TopUps');

  constructor(
    private readonly store: TopUpStore,
    private readonly gateway: PaymentGateway,
    private readonly audit: AuditTrail,
    private readonly clock: Clock,
    private readonly settings: Settings,
  ) {}

  async pendingFull(orgId: string): Promise<boolean> {
    return (await this.store.countPending(orgId)) >= PENDING_TOP_UP_LIMIT;
  }

  async openCheckout(orgId: string, request: TopUpRequest): Promise<OpenedCheckout> {
    const id = newId('tu');
    const createdAt = this.clock.now();
    const expiresAt = new Date(createdAt.getTime() + this.settings.topUpExpiresS * 1000);
    const session = await this.gateway.createCheckout({ topUpId: id, orgId, amount: request.amount, returnUrl: request.returnUrl, expiresAt });
    return { id, createdAt, expiresAt, session };
  }

  /** In the caller's transaction. 409 quota_exceeded when the limit was reached meanwhile. */
  async insert(actor: TopUpActor, request: TopUpRequest, opened: OpenedCheckout): Promise<TopUp> {
    const orgId = actor.principal.orgId;
    await this.store.lockOrganization(orgId);
    if ((await this.store.countPending(orgId)) >= PENDING_TOP_UP_LIMIT) throw pendingLimitReached();
    const now = opened.createdAt;
    const topUp: TopUp = {
      id: opened.id,
      orgId,
      status: 'pending',
      amount: request.amount,
      provider: this.gateway.name,
      sessionId: opened.session.sessionId,
      checkoutUrl: opened.session.checkoutUrl,
      returnUrl: request.returnUrl,
      createdAt: now,
      expiresAt: opened.expiresAt,
      updatedAt: now,
      paidAt: null,
      failureReason: null,
      refundedAmount: Money.zero(request.amount.currency),
    };
    await this.store.insert(topUp);
    const a = actorOf(actor);
    await this.audit.record({
      orgId,
      actorType: a.type,
      actorId: a.id,
      ipAddress: a.ip,
      action: 'wallet.top_up.create',
      targetId: topUp.id,
      targetType: 'top_up',
      data: { amount: topUp.amount.format(), currency: topUp.amount.currency },
    });
    return topUp;
  }

  /** A session whose request ended in a 409 or a replay: canceled at the provider, best effort, never shown. */
  async discard(session: CheckoutSession): Promise<void> {
    try {
      await this.gateway.cancelCheckout(session.sessionId);
    } catch (err) {
      this.logger.warn({ msg: 'top-up: an unused checkout session could not be canceled', session_id: session.sessionId, err: err instanceof Error ? err.message : String(err) });
    }
  }
}

@Injectable()
export class ReadTopUps {
  constructor(private readonly store: TopUpStore) {}

  async get(principal: Principal, id: string): Promise<TopUp> {
    const topUp = await this.store.find(principal.orgId, id);
    if (!topUp) throw topUpNotFound(id);
    return topUp;
  }

  async list(principal: Principal, query: { status?: string; currency?: string; limit?: string; cursor?: string }): Promise<{ topUps: TopUp[]; nextCursor: string | null }> {
    const filter: TopUpFilter = {};
    if (query.status !== undefined) {
      if (!(TOP_UP_STATUSES as readonly string[]).includes(query.status)) throw invalidRequest(`status must be one of ${TOP_UP_STATUSES.join(', ')}`, { field: 'status' });
      filter.status = query.status as TopUpStatus;
    }
    if (query.currency !== undefined) {
      if (!isCurrency(query.currency)) throw invalidRequest('currency must be USD or IDR', { field: 'currency' });
      filter.currency = query.currency;
    }
    const limit = parseLimit(query.limit);
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    const page = await this.store.list(principal.orgId, filter, limit, after);
    return { topUps: page.items, nextCursor: page.next && encodeCursor(page.next) };
  }
}

/** POST /v1/wallet/top-ups/{id}/cancel: the provider first (outside a transaction), then the row. */
@Injectable()
export class CancelTopUp {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly store: TopUpStore,
    private readonly gateway: PaymentGateway,
    private readonly transitions: TopUpTransitions,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
  ) {}

  /** The checks before the provider is called: 404, 409 unless pending. */
  async check(principal: Principal, id: string): Promise<TopUp> {
    const topUp = await this.store.find(principal.orgId, id);
    if (!topUp) throw topUpNotFound(id);
    if (topUp.status !== 'pending') throw topUpNotPending(topUp);
    return topUp;
  }

  async cancelAtProvider(topUp: TopUp): Promise<void> {
    const answer = await this.gateway.cancelCheckout(topUp.sessionId);
    if (answer === 'already_paid') {
      throw new DomainError('invalid_state', `Top-up ${topUp.id} was paid at the checkout; it will be credited`, { status: 'pending' });
    }
  }

  /** In the caller's transaction: still pending under the row lock → canceled; else 409. */
  async commit(actor: TopUpActor, id: string): Promise<TopUp> {
    const topUp = await this.store.lock(id);
    if (!topUp || topUp.orgId !== actor.principal.orgId) throw topUpNotFound(id);
    if (topUp.status !== 'pending') throw topUpNotPending(topUp);
    const ended = await this.transitions.apply(topUp, { to: 'canceled', via: 'api', actor: actorOf(actor) }, this.clock.now(), (t) => this.store.saveStatus(t));
    this.metrics.topUpEnded(ended.amount.currency, 'canceled');
    return ended;
  }
}

/**
 * An inbound payment event, verified: one transaction records it (a duplicate stops there),
 * locks the top-up it names and applies what it says (funding.md "Inbound payment events").
 */
@Injectable()
export class ReceivePaymentEvent {
  private readonly logger = new Logger('PaymentEvents');

  constructor(
    private readonly uow: UnitOfWork,
    private readonly store: TopUpStore,
    private readonly transitions: TopUpTransitions,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
    private readonly gateway: PaymentGateway,
    private readonly refunds: RefundStore,
    private readonly refundOutcomes: RefundOutcomes,
  ) {}

  /**
   * POST /v1/payment-events/{provider}: 404 unless the configured provider, then the signature
   * on the raw bytes and the body (400 naming Stripe-Signature or the member: nothing recorded),
   * then execute().
   */
  async receive(provider: string, rawBody: Buffer, headers: Record<string, string | string[] | undefined>): Promise<EventOutcome | 'duplicate'> {
    if (!this.gateway.enabled() || provider !== this.gateway.name) throw new DomainError('not_found', `No payment provider ${provider} is configured`);
    let event: PaymentEvent;
    try {
      event = this.gateway.parseEvent(rawBody, headers);
    } catch (err) {
      if (!(err instanceof PaymentEventRefused)) throw err;
      this.metrics.paymentEvent(provider, err.reason);
      if (err.reason === 'bad_signature') this.logger.warn({ msg: 'payment event refused: bad signature', provider, bytes: rawBody.length });
      throw invalidRequest(err.message, { field: err.field });
    }
    return this.execute(provider, event);
  }

  async execute(provider: string, event: PaymentEvent): Promise<EventOutcome | 'duplicate'> {
    const result = await this.uow.run(async (): Promise<{ outcome: EventOutcome | 'duplicate'; ended?: TopUp }> => {
      if (!(await this.store.recordEvent(provider, event.eventId, event.type, event.topUpId))) return { outcome: 'duplicate' };
      const decided = await this.decide(event, provider);
      await this.store.setEventOutcome(provider, event.eventId, decided.outcome);
      return decided;
    });
    this.metrics.paymentEvent(provider, result.outcome);
    if (result.ended) this.metrics.topUpEnded(result.ended.amount.currency, result.ended.status);
    if (result.outcome === 'unmatched') {
      this.logger.error({
        msg: 'payment event unmatched: no credit (check the provider, then credit with wallet:credit if money was received)',
        provider,
        event_id: event.eventId,
        type: event.type,
        top_up_id: event.topUpId,
        session_id: event.sessionId,
      });
    }
    return result.outcome;
  }

  /**
   * A refund event: each refund it reports is found by this service's refund id (its metadata) or
   * the provider's, and its state applied (RefundOutcomes: a refund settled the same way before,
   * or a replayed event, changes nothing); a refund with neither known, or of another amount, is
   * `unmatched` (made at the provider's dashboard: the operator debits the wallet by an
   * adjustment if it should be). An event listing no refunds has the top-up's pending refunds
   * asked of the provider at once.
   */
  private async decideRefund(provider: string, event: PaymentEvent): Promise<{ outcome: EventOutcome }> {
    const reports = event.refunds ?? [];
    if (reports.length === 0) {
      if (event.topUpId) await this.refunds.hurry(event.topUpId, this.clock.now());
      return { outcome: 'no_change' };
    }
    let applied = false;
    let unmatched = false;
    for (const report of reports) {
      const refund =
        (report.refundId ? await this.refunds.find(report.refundId) : undefined) ??
        (report.providerRefundId ? await this.refunds.findByProviderRefundId(provider, report.providerRefundId) : undefined);
      if (!refund || refund.provider !== provider || report.amount !== refund.amount.minor) {
        unmatched = true;
        this.logger.error({ msg: 'refund event names a refund not made here (or of another amount): no debit', provider, event_id: event.eventId, provider_refund_id: report.providerRefundId, refund_id: report.refundId });
        continue;
      }
      if ((await this.refundOutcomes.apply(refund.id, report)) === 'applied') applied = true;
    }
    return { outcome: applied ? 'applied' : unmatched ? 'unmatched' : 'no_change' };
  }

  private async decide(event: PaymentEvent, provider = this.gateway.name): Promise<{ outcome: EventOutcome; ended?: TopUp }> {
    if (event.kind === 'refund') return this.decideRefund(provider, event);
    if (event.kind === 'unpaid' || event.kind === 'other') return { outcome: 'ignored' };
    const topUp = event.topUpId ? await this.store.lock(event.topUpId) : undefined;
    if (
      !topUp ||
      topUp.sessionId !== event.sessionId ||
      event.amount === null ||
      topUp.amount.minor !== event.amount ||
      topUp.amount.currency !== event.currency
    ) {
      return { outcome: 'unmatched' };
    }
    const save = (t: TopUp) => this.store.saveStatus(t);
    const now = this.clock.now();
    if (event.kind === 'paid') {
      // Money received is never dropped: failed, canceled and expired top-ups are credited too.
      if (isPaid(topUp.status)) return { outcome: 'no_change' };
      return { outcome: 'applied', ended: await this.transitions.apply(topUp, { to: 'succeeded', providerEventId: event.eventId }, now, save) };
    }
    if (topUp.status !== 'pending') return { outcome: 'no_change' };
    const ending =
      event.kind === 'failed'
        ? ({ to: 'failed', failureReason: event.failureReason ?? 'payment_failed' } as const)
        : event.kind === 'expired'
          ? ({ to: 'expired' } as const)
          : ({ to: 'canceled', via: 'checkout' } as const);
    return { outcome: 'applied', ended: await this.transitions.apply(topUp, ending, now, save) };
  }
}

/**
 * The expiry sweep: pending top-ups past expires_at. The provider is asked first (outside a
 * transaction), and a session still open there is closed: paid → credited as a paid event
 * would; otherwise (or no answer) → expired under the row lock, if still pending (a later paid
 * event still credits it).
 */
@Injectable()
export class ExpireTopUps {
  private readonly logger = new Logger('TopUpExpiry');

  constructor(
    private readonly uow: UnitOfWork,
    private readonly store: TopUpStore,
    private readonly gateway: PaymentGateway,
    private readonly transitions: TopUpTransitions,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
  ) {}

  async runOnce(stopping: () => boolean = () => false): Promise<number> {
    const due = await this.store.duePending(this.clock.now(), 100);
    let ended = 0;
    for (const { id, sessionId } of due) {
      if (stopping()) break;
      let state: SessionState | undefined;
      try {
        state = await this.gateway.retrieve(sessionId);
        // Still open at the provider (Stripe keeps a session at least 30 minutes): closed there first, so that it cannot be paid after the top-up expired.
        if (state === 'open' && (await this.gateway.cancelCheckout(sessionId)) === 'already_paid') state = await this.gateway.retrieve(sessionId);
      } catch (err) {
        this.logger.warn({ msg: 'top-up expiry: the provider did not answer; expiring', top_up_id: id, err: err instanceof Error ? err.message : String(err) });
      }
      const done = await this.uow.run(async () => {
        const topUp = await this.store.lock(id);
        if (!topUp || topUp.status !== 'pending') return undefined;
        const now = this.clock.now();
        const save = (t: TopUp) => this.store.saveStatus(t);
        return state === 'paid'
          ? this.transitions.apply(topUp, { to: 'succeeded', providerEventId: null }, now, save)
          : this.transitions.apply(topUp, { to: 'expired' }, now, save);
      });
      if (done) {
        ended++;
        this.metrics.topUpEnded(done.amount.currency, done.status);
      }
    }
    return ended;
  }
}

export { fundingUnavailable };
