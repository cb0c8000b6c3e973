import { Injectable } from '@nestjs/common';
import { AuditTrail } from '../../audit/application/audit-trail.port';
import { WalletLedger } from '../../wallet/application/wallet.port';
import { TopUp, TopUpStatus } from '../domain/top-up';

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
 * any concurrency) and the audit entry, all committed together. Event webhooks record their
 * outbox rows here (wallet.top_up.succeeded / failed / expired, wallet.credited).
 */
@Injectable()
export class TopUpTransitions {
  constructor(
    private readonly wallet: WalletLedger,
    private readonly audit: AuditTrail,
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
    const target = { orgId: topUp.orgId, targetId: topUp.id, targetType: 'top_up', ipAddress: null };
    switch (ending.to) {
      case 'succeeded':
        await this.wallet.credit(topUp.orgId, topUp.amount, 'top-up', topUp.id);
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
        // Not audited (funding.md): the customer did nothing.
        break;
    }
    return changed;
  }
}
