import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../shared/database/unit-of-work';
import { DomainError, invalidRequest, notFound } from '../../shared/kernel/errors/domain-error';
import { newId } from '../../shared/kernel/ids/ids';
import { AuditTrail } from '../audit/application/audit-trail.port';
import { Accounts } from '../auth/application/accounts.port';
import { Credit, WalletLedger } from '../wallet/application/wallet.port';
import { positiveAmount } from './credit-wallet.use-case';

/** Who adjusts: billing staff (the admin API: their role is what the customer sees) or the operator CLI (system). */
export type AdjustmentActor = { type: 'staff'; staffId: string; role: string; justification: string | null } | { type: 'system' };

export interface AdjustmentRecord {
  id: string;
  orgId: string;
  direction: 'credit' | 'debit';
  reason: string;
  reference: string | null;
  credit: Credit;
}

/**
 * A wallet adjustment (admin.md "Money"): a credit or a debit of available with a reason the
 * customer sees in the wallet history; a debit above available is 409 conflict and writes
 * nothing. Audited (`wallet.adjustment`) in the organization's log.
 */
@Injectable()
export class AdjustWallet {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly accounts: Accounts,
    private readonly wallet: WalletLedger,
    private readonly audit: AuditTrail,
  ) {}

  async execute(
    input: { orgId: string; currency: unknown; amount: unknown; direction: unknown; reason: unknown; reference?: unknown },
    actor: AdjustmentActor,
  ): Promise<AdjustmentRecord> {
    const amount = positiveAmount(input.currency, input.amount);
    if (input.direction !== 'credit' && input.direction !== 'debit') throw invalidRequest('direction must be credit or debit', { field: 'direction' });
    const direction = input.direction;
    const reason = typeof input.reason === 'string' ? input.reason.trim() : '';
    if (reason.length < 1 || reason.length > 500) throw invalidRequest('reason must be 1 to 500 characters (shown to the customer)', { field: 'reason' });
    if (input.reference !== undefined && input.reference !== null && (typeof input.reference !== 'string' || input.reference.length < 1 || input.reference.length > 200)) {
      throw invalidRequest('reference must be 1 to 200 characters', { field: 'reference' });
    }
    const reference = (input.reference as string | null | undefined) ?? null;
    const id = newId('adj');
    return this.uow.run(async () => {
      if (!(await this.accounts.organizationExists(input.orgId))) throw notFound(`Organization ${input.orgId} not found`);
      const moved = await this.wallet.adjust(input.orgId, amount, { id, direction, reason, reference, staffId: actor.type === 'staff' ? actor.staffId : null });
      if ('refused' in moved) {
        throw new DomainError('conflict', `A debit of ${amount.format()} ${amount.currency} is larger than the available ${moved.available.format()} ${amount.currency}`, {
          field: 'amount',
          available: moved.available.format(),
          currency: amount.currency,
        });
      }
      await this.audit.record({
        orgId: input.orgId,
        actorType: actor.type,
        actorId: actor.type === 'staff' ? actor.role : null,
        action: 'wallet.adjustment',
        targetId: id,
        targetType: 'wallet_adjustment',
        ipAddress: null,
        data: {
          currency: amount.currency, amount: amount.format(), direction, reason, reference,
          ...(actor.type === 'staff' ? { justification: actor.justification } : {}),
        },
      });
      return { id, orgId: input.orgId, direction, reason, reference, credit: moved };
    });
  }
}
