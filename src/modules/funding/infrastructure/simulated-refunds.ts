import { Injectable } from '@nestjs/common';
import { Db } from '../../../shared/database/transaction';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { randomBase62 } from '../../../shared/kernel/ids/ids';
import { ProviderRefund, RefundRequest } from '../application/payment-gateway.port';
import { SimulatedCheckout } from './simulated-checkout';
import { toProviderAmount } from './stripe-events';

interface SimRefundRow {
  id: string;
  status: 'succeeded' | 'failed';
  failure_reason: string | null;
}

const answer = (r: SimRefundRow): ProviderRefund => ({
  providerRefundId: r.status === 'succeeded' ? r.id : null,
  state: r.status,
  failureReason: r.failure_reason,
});

/**
 * The simulated provider's refunds, Stripe's way: one per refund id (its idempotency key: a
 * retry answers the same refund), refused (`failed`) when the session was not paid or when it
 * would give back more than was paid and not yet refunded. A refund made records its signed
 * `charge.refunded` event (Stripe's shape, the refunds listed) in the same transaction, then
 * delivers it to this process's POST /v1/payment-events/simulated, retried by the workers as a
 * checkout's events are.
 */
@Injectable()
export class SimulatedRefunds {
  constructor(
    private readonly db: Db,
    private readonly uow: UnitOfWork,
    private readonly clock: Clock,
    private readonly checkout: SimulatedCheckout,
  ) {}

  async retrieve(refundId: string): Promise<ProviderRefund | null> {
    const row = await this.db.one<SimRefundRow>(`SELECT id, status, failure_reason FROM sim_refunds WHERE refund_id = $1`, [refundId]);
    return row ? answer(row) : null;
  }

  async refund(request: RefundRequest): Promise<ProviderRefund> {
    const made = await this.uow.run(async (): Promise<{ row: SimRefundRow; eventId: string | null }> => {
      const session = await this.db.one<{ status: string; currency: string; amount: string }>(
        `SELECT status, currency, amount::text AS amount FROM sim_checkout_sessions WHERE id = $1 FOR UPDATE`,
        [request.sessionId],
      );
      const existing = await this.db.one<SimRefundRow>(`SELECT id, status, failure_reason FROM sim_refunds WHERE refund_id = $1`, [request.refundId]);
      if (existing) return { row: existing, eventId: null };
      const id = `re_sim_${randomBase62(24)}`;
      if (!session) return { row: { id, status: 'failed', failure_reason: 'resource_missing' }, eventId: null };
      let failure: string | null = null;
      if (session.status !== 'paid') failure = 'charge_not_paid';
      else if (session.currency !== request.amount.currency) failure = 'currency_mismatch';
      else {
        const refunded = await this.db.one<{ total: string }>(`SELECT coalesce(sum(amount), 0)::text AS total FROM sim_refunds WHERE session_id = $1 AND status = 'succeeded'`, [request.sessionId]);
        if (BigInt(refunded?.total ?? '0') + request.amount.minor > BigInt(session.amount)) failure = 'amount_too_large';
      }
      if (failure) {
        // A refused refund is kept under its key too (Stripe answers a retried refused request the same way).
        await this.db.query(`INSERT INTO sim_refunds (id, refund_id, session_id, currency, amount, status, failure_reason) VALUES ($1, $2, $3, $4, $5, 'failed', $6)`, [
          id,
          request.refundId,
          request.sessionId,
          request.amount.currency,
          request.amount.minor.toString(),
          failure,
        ]);
        return { row: { id, status: 'failed', failure_reason: failure }, eventId: null };
      }
      await this.db.query(
        `INSERT INTO sim_refunds (id, refund_id, session_id, currency, amount, status) VALUES ($1, $2, $3, $4, $5, 'succeeded')`,
        [id, request.refundId, request.sessionId, request.amount.currency, request.amount.minor.toString()],
      );
      const all = await this.db.query<{ id: string; refund_id: string; amount: string }>(
        `SELECT id, refund_id, amount::text AS amount FROM sim_refunds WHERE session_id = $1 AND status = 'succeeded' ORDER BY created_at DESC, id`,
        [request.sessionId],
      );
      const currency = request.amount.currency;
      const cents = (minor: bigint) => Number(toProviderAmount(currency, minor));
      const refundedTotal = all.reduce((sum, r) => sum + BigInt(r.amount), 0n);
      const eventId = `evt_sim_${randomBase62(24)}`;
      const created = Math.floor(this.clock.now().getTime() / 1000);
      const body = JSON.stringify({
        id: eventId,
        object: 'event',
        type: 'charge.refunded',
        created,
        data: {
          object: {
            id: `ch_sim_${request.sessionId.slice('cs_sim_'.length)}`,
            object: 'charge',
            amount: cents(BigInt(session.amount)),
            amount_refunded: cents(refundedTotal),
            currency: currency.toLowerCase(),
            refunded: refundedTotal === BigInt(session.amount),
            metadata: { top_up_id: request.topUpId, org_id: request.orgId },
            refunds: {
              object: 'list',
              data: all.map((r) => ({
                id: r.id,
                object: 'refund',
                amount: cents(BigInt(r.amount)),
                currency: currency.toLowerCase(),
                status: 'succeeded',
                metadata: { refund_id: r.refund_id, top_up_id: request.topUpId },
              })),
            },
          },
        },
      });
      await this.db.query(`INSERT INTO sim_payment_events (id, session_id, type, body, next_attempt_at) VALUES ($1, $2, 'charge.refunded', $3, now() + interval '5 seconds')`, [
        eventId,
        request.sessionId,
        body,
      ]);
      return { row: { id, status: 'succeeded', failure_reason: null }, eventId };
    });
    if (made.eventId) await this.checkout.deliver(made.eventId);
    return answer(made.row);
  }
}
