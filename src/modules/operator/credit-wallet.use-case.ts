import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../shared/database/unit-of-work';
import { invalidRequest, notFound } from '../../shared/kernel/errors/domain-error';
import { Money, isCurrency } from '../../shared/kernel/money/money';
import { AuditTrail } from '../audit/application/audit-trail.port';
import { Accounts } from '../auth/application/accounts.port';
import { Balance, WalletLedger } from '../wallet/application/wallet.port';
import { presentWalletTransaction } from '../wallet/domain/wallet-transaction-json';
import { EventOutbox } from '../webhooks/application/event-outbox.port';

/** An amount to move: a currency of the wallet and a positive decimal of it (400 naming the field). */
export function positiveAmount(currency: unknown, amount: unknown): Money {
  if (typeof currency !== 'string' || !isCurrency(currency)) throw invalidRequest('currency must be USD or IDR', { field: 'currency' });
  if (typeof amount !== 'string') throw invalidRequest('amount must be a decimal string such as "25.50"', { field: 'amount' });
  const parsed = Money.parse(amount, currency, 'amount');
  if (parsed.minor <= 0n) throw invalidRequest('amount must be greater than zero', { field: 'amount' });
  return parsed;
}

/** Operator top-up of an organization's wallet (CLI wallet:credit); emits `wallet.credited` with the credit. */
@Injectable()
export class CreditWallet {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly accounts: Accounts,
    private readonly wallet: WalletLedger,
    private readonly audit: AuditTrail,
    private readonly outbox: EventOutbox,
  ) {}

  async execute(input: { orgId: string; currency: string; amount: string }): Promise<Balance> {
    const amount = positiveAmount(input.currency, input.amount);
    return this.uow.run(async () => {
      if (!(await this.accounts.organizationExists(input.orgId))) throw notFound(`Organization ${input.orgId} not found`);
      const { balance, transaction } = await this.wallet.credit(input.orgId, amount, 'operator credit');
      await this.audit.record({ orgId: input.orgId, actorType: 'system', actorId: null, action: 'wallet.credit', ipAddress: null, data: { currency: amount.currency, amount: amount.format() } });
      await this.outbox.record({ orgId: input.orgId, type: 'wallet.credited', createdAt: transaction.createdAt, data: presentWalletTransaction(transaction) });
      return balance;
    });
  }
}
