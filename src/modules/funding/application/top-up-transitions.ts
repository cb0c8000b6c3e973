import { Injectable } from '@nestjs/common';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { WalletLedger } from '../../wallet/application/wallet.port';
import { presentWalletTransaction } from '../../wallet/domain/wallet-transaction-json';
import { EventOutbox } from '../../webhooks/application/event-outbox.port';
import { EventRecord } from '../../webhooks/domain/events';
import { TopUp, TopUpStatus } from '../domain/top-up';
import { presentTopUp } from '../domain/top-up-json';

/** How a top-up ends (or is revived by money received late). */
export type TopUpEnding =
  | { to: 'succeeded'; providerEventId: string | null }
  | { to: 'failed'; failureReason: string }
  | { to: 'canceled'; via: 'api' | 'checkout'; actor?: { type: 'user' | 'api_key'; id: string; ip: string | null } }
  | { to: 'expired' };

/**
 * THE place where a top-up ends: every move out of `pending` (and a late payment's move from
 * failed, canceled or expired to succeeded) goes through apply(), in the caller's transaction,
 * with the top-up's row locked. It writes the status, the credit (its ledger row names the
 * top-up: the partial unique index wallet_ledger_one_top_up_credit refuses a second one under
 * any concurrency), the audit entry and the webhook events, all committed together:
 * `wallet.top_up.succeeded` / `failed` / `expired` with the top-up as GET /v1/wallet/top-ups/{id}
 * returns it, and `wallet.credited` with the credit's ledger row as GET /v1/wallet/transactions
 * lists it. A cancel emits no event (there is no such event type).
 */
@Injectable()
export class TopUpTransitions {
  constructor(
    private readonly wallet: WalletLedger,
    private readonly audit: AuditTrail,
    private readonly outbox: EventOutbox,
  ) {}

  /** Applies `ending` to the locked top-up; returns it as changed. */
  async apply(topUp: TopUp, ending: TopUpEnding, now: Date, save: (t: TopUp) => Promise<void>): Promise<TopUp> {
    const from: TopUpStatus = topUp.status;
    const changed: TopUp = { ...topUp, status: ending.to, updatedAt: now };
    if (ending.to === 'succeeded') {
      changed.paidAt = now;
      changed.failureReason = null;
    }
    if (ending.to === 'failed') changed.failureReason = ending.failureReason;
    await save(changed);
    const events: EventRecord[] = [];
    const target = { orgId: topUp.orgId, targetId: topUp.id, targetType: 'top_up', ipAddress: null };
    switch (ending.to) {
      case 'succeeded':
        {
          const { transaction } = await this.wallet.credit(topUp.orgId, topUp.amount, 'top-up', topUp.id);
          events.push(
            { orgId: topUp.orgId, type: 'wallet.top_up.succeeded', createdAt: now, data: presentTopUp(changed) },
            { orgId: topUp.orgId, type: 'wallet.credited', createdAt: transaction.createdAt, data: presentWalletTransaction(transaction) },
          );
        }
        await this.audit.record({
          ...target,
          actorType: 'system',
          actorId: null,
          action: 'wallet.top_up.succeeded',
          requestId: null,
          data: {
            amount: topUp.amount.format(),
            currency: topUp.amount.currency,
            provider: topUp.provider,
            provider_event_id: ending.providerEventId,
            late: from !== 'pending',
            from,
          },
        });
        break;
      case 'failed':
        await this.audit.record({ ...target, actorType: 'system', actorId: null, action: 'wallet.top_up.failed', requestId: null, data: { failure_reason: ending.failureReason } });
        events.push({ orgId: topUp.orgId, type: 'wallet.top_up.failed', createdAt: now, data: presentTopUp(changed) });
        break;
      case 'canceled':
        await this.audit.record({
          ...target,
          actorType: ending.actor?.type ?? 'system',
          actorId: ending.actor?.id ?? null,
          ipAddress: ending.actor?.ip ?? null,
          action: 'wallet.top_up.cancel',
          ...(ending.via === 'checkout' ? { requestId: null } : {}),
          data: { via: ending.via },
        });
        break;
      case 'expired':
        // Not audited: the customer did nothing.
        events.push({ orgId: topUp.orgId, type: 'wallet.top_up.expired', createdAt: now, data: presentTopUp(changed) });
        break;
    }
    await this.outbox.recordMany(events);
    return changed;
  }
}
