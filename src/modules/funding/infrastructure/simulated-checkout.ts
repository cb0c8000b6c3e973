import { Injectable, Logger } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { Settings } from '../../../shared/config/settings';
import { Db } from '../../../shared/database/transaction';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { randomBase62 } from '../../../shared/kernel/ids/ids';
import { Currency, Money } from '../../../shared/kernel/money/money';
import { stripeSignatureHeader } from '../domain/stripe-signature';
import { SimulatedProviderSecret } from './simulated-provider-secret';
import { toProviderAmount } from './stripe-events';

export interface SimSession {
  id: string;
  topUpId: string;
  amount: Money;
  returnUrl: string | null;
  /** As shown: an open session past its expiry reads expired. */
  status: 'open' | 'paid' | 'canceled' | 'expired';
  /** The paying organization's name (the top-up's organization). */
  organizationName: string;
  expiresAt: Date;
}

/** Delays before each retry of an undelivered event (after the first attempt). */
export const DELIVERY_RETRY_S = [5, 30, 120, 600, 1800];
/** A delivery attempt not answered within this is a failure. */
export const DELIVERY_TIMEOUT_MS = 10_000;

export type CheckoutAction = 'pay' | 'cancel';

/**
 * The simulated provider's site (the hosted checkout) and its event delivery: Pay and Cancel
 * record the session's new state and its signed event in one transaction (committed before
 * delivery: the embedded engine has one connection), then deliver the event to this process's
 * own POST /v1/payment-events/simulated, outside any transaction. An undelivered event is
 * retried by worker processes (5 s, 30 s, 2 min, 10 min, 30 min, a fresh signature each time),
 * then dropped with an error log.
 */
@Injectable()
export class SimulatedCheckout {
  private readonly logger = new Logger('SimulatedCheckout');

  constructor(
    private readonly db: Db,
    private readonly uow: UnitOfWork,
    private readonly clock: Clock,
    private readonly settings: Settings,
    private readonly secret: SimulatedProviderSecret,
    private readonly host: HttpAdapterHost,
  ) {}

  async session(id: string): Promise<SimSession | undefined> {
    const row = await this.db.one<{
      id: string; top_up_id: string; currency: Currency; amount: string; return_url: string | null; status: SimSession['status']; expires_at: Date;
      organization_name: string | null;
    }>(
      `SELECT s.id, s.top_up_id, s.currency, s.amount::text AS amount, s.return_url, s.status, s.expires_at, o.name AS organization_name
         FROM sim_checkout_sessions s
         LEFT JOIN top_ups t ON t.id = s.top_up_id
         LEFT JOIN organizations o ON o.id = t.org_id
        WHERE s.id = $1`,
      [id],
    );
    if (!row) return undefined;
    const expired = row.status === 'open' && row.expires_at.getTime() <= this.clock.now().getTime();
    return {
      id: row.id,
      topUpId: row.top_up_id,
      amount: Money.ofMinor(row.currency, BigInt(row.amount)),
      returnUrl: row.return_url,
      status: expired ? 'expired' : row.status,
      organizationName: row.organization_name ?? 'your organization',
      expiresAt: row.expires_at,
    };
  }

  /**
   * Pay or Cancel: the session (locked) must be open and unexpired; it becomes paid or canceled
   * and its event is recorded, in one transaction. Undefined: unknown session; 'closed': not open.
   */
  async act(id: string, action: CheckoutAction): Promise<{ session: SimSession; eventId: string } | 'closed' | undefined> {
    return this.uow.run(async () => {
      const row = await this.db.one<{ status: string; expires_at: Date }>(`SELECT status, expires_at FROM sim_checkout_sessions WHERE id = $1 FOR UPDATE`, [id]);
      if (!row) return undefined;
      if (row.status !== 'open' || row.expires_at.getTime() <= this.clock.now().getTime()) return 'closed';
      const status = action === 'pay' ? 'paid' : 'canceled';
      await this.db.query(`UPDATE sim_checkout_sessions SET status = $2, updated_at = now() WHERE id = $1`, [id, status]);
      const session = (await this.session(id))!;
      const eventId = `evt_sim_${randomBase62(24)}`;
      const created = Math.floor(this.clock.now().getTime() / 1000);
      const body = JSON.stringify({
        id: eventId,
        object: 'event',
        type: action === 'pay' ? 'checkout.session.completed' : 'checkout.session.canceled',
        created,
        data: {
          object: {
            id: session.id,
            object: 'checkout.session',
            client_reference_id: session.topUpId,
            amount_total: Number(toProviderAmount(session.amount.currency, session.amount.minor)),
            currency: session.amount.currency.toLowerCase(),
            payment_status: action === 'pay' ? 'paid' : 'unpaid',
            status: action === 'pay' ? 'complete' : 'expired',
          },
        },
      });
      await this.db.query(`INSERT INTO sim_payment_events (id, session_id, type, body, next_attempt_at) VALUES ($1, $2, $3, $4, now() + interval '5 seconds')`, [
        eventId,
        id,
        action === 'pay' ? 'checkout.session.completed' : 'checkout.session.canceled',
        body,
      ]);
      return { session, eventId };
    });
  }

  /** This process's HTTP port: the one the request came in on, else the server's. */
  private port(hint?: number): number | undefined {
    if (hint) return hint;
    const address = this.host.httpAdapter?.getHttpServer()?.address?.();
    return address && typeof address === 'object' ? address.port : undefined;
  }

  /** One delivery attempt of a recorded event (outside any transaction); true on a 2xx. */
  async deliver(eventId: string, portHint?: number): Promise<boolean> {
    const row = await this.db.one<{ body: string; attempts: number }>(
      `SELECT body, attempts FROM sim_payment_events WHERE id = $1 AND delivered_at IS NULL AND dropped_at IS NULL`,
      [eventId],
    );
    if (!row) return true;
    const port = this.port(portHint);
    let ok = false;
    let status: number | string = 'no port';
    if (port) {
      const t = Math.floor(this.clock.now().getTime() / 1000);
      try {
        const res = await fetch(`http://127.0.0.1:${port}/v1/payment-events/simulated`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'stripe-signature': stripeSignatureHeader(this.secret.value, t, row.body) },
          body: row.body,
          signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
          redirect: 'manual',
        });
        await res.arrayBuffer().catch(() => undefined);
        status = res.status;
        ok = res.status >= 200 && res.status < 300;
      } catch (err) {
        status = err instanceof Error ? err.name : 'error';
      }
    }
    const attempts = row.attempts + 1;
    if (ok) {
      await this.db.query(`UPDATE sim_payment_events SET attempts = $2, delivered_at = now(), next_attempt_at = NULL WHERE id = $1`, [eventId, attempts]);
      return true;
    }
    const delay = DELIVERY_RETRY_S[attempts - 1];
    if (delay === undefined) {
      await this.db.query(`UPDATE sim_payment_events SET attempts = $2, dropped_at = now(), next_attempt_at = NULL WHERE id = $1`, [eventId, attempts]);
      this.logger.error({ msg: 'simulated payment event dropped after its last delivery attempt', event_id: eventId, attempts, status });
    } else {
      await this.db.query(`UPDATE sim_payment_events SET attempts = $2, next_attempt_at = now() + make_interval(secs => $3) WHERE id = $1`, [eventId, attempts, delay]);
      this.logger.warn({ msg: 'simulated payment event not delivered; retrying later', event_id: eventId, attempts, status, retry_in_s: delay });
    }
    return false;
  }

  /** Worker processes: delivers the events due for a retry (each claimed by pushing its next attempt past the timeout first). */
  async retryDue(limit = 20): Promise<number> {
    const due = await this.db.query<{ id: string }>(
      `UPDATE sim_payment_events SET next_attempt_at = now() + interval '15 seconds'
        WHERE id IN (SELECT id FROM sim_payment_events WHERE delivered_at IS NULL AND dropped_at IS NULL AND next_attempt_at <= now()
                      ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
       RETURNING id`,
      [limit],
    );
    let delivered = 0;
    for (const { id } of due) if (await this.deliver(id)) delivered++;
    return delivered;
  }
}
