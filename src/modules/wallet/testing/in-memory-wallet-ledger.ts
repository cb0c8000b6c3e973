import { describeTransaction } from '../domain/transaction-description';
import { CURRENCIES, Currency, Money } from '../../../shared/kernel/money/money';
import { AdjustmentInput, Balance, Credit, DebitRefused, HoldResult, Settlement, WalletLedger } from '../application/wallet.port';

export interface LedgerEntry {
  orgId: string;
  kind: 'credit' | 'hold' | 'capture' | 'release' | 'adjustment' | 'refund';
  amount: Money;
  operationId: string | null;
}

/** The wallet in memory, with the database's rules: available never negative, one settlement per hold. */
export class InMemoryWalletLedger extends WalletLedger {
  readonly entries: LedgerEntry[] = [];
  private readonly rows = new Map<string, { available: bigint; reserved: bigint }>();

  private row(orgId: string, currency: Currency): { available: bigint; reserved: bigint } {
    const k = `${orgId}/${currency}`;
    let r = this.rows.get(k);
    if (!r) this.rows.set(k, (r = { available: 0n, reserved: 0n }));
    return r;
  }

  private toBalance(orgId: string, currency: Currency): Balance {
    const r = this.row(orgId, currency);
    return { currency, available: Money.ofMinor(currency, r.available), reserved: Money.ofMinor(currency, r.reserved) };
  }

  async credit(orgId: string, amount: Money, _memo: string, topUpId?: string): Promise<Credit> {
    if (amount.minor <= 0n) throw new RangeError('A credit must be positive');
    this.row(orgId, amount.currency).available += amount.minor;
    this.entries.push({ orgId, kind: 'credit', amount, operationId: null });
    const balance = this.toBalance(orgId, amount.currency);
    const transaction = {
      id: `wtx_${this.entries.length.toString(16).padStart(32, '0')}`,
      type: 'credit' as const,
      currency: amount.currency,
      amount,
      availableAfter: balance.available,
      reservedAfter: balance.reserved,
      source: topUpId === undefined ? ('operator' as const) : ('top_up' as const),
      operationId: null,
      topUpId: topUpId ?? null,
      description: describeTransaction({ type: 'credit', topUpId: topUpId ?? null, operationId: null, subject: null }),
      createdAt: new Date(),
    };
    return { balance, transaction };
  }

  async adjust(orgId: string, amount: Money, adjustment: AdjustmentInput): Promise<Credit | DebitRefused> {
    return this.move(orgId, amount, 'adjustment', adjustment.direction, adjustment.reason, { adjustmentId: adjustment.id });
  }

  async debitRefund(orgId: string, amount: Money, refundId: string, reason: string, topUpId: string): Promise<Credit | DebitRefused> {
    if (this.entries.some((e) => e.kind === 'refund' && e.operationId === refundId)) throw new Error('second debit of one refund');
    return this.move(orgId, amount, 'refund', 'debit', reason, { refundId, topUpId });
  }

  private move(orgId: string, amount: Money, kind: 'adjustment' | 'refund', direction: 'credit' | 'debit', reason: string, ids: { adjustmentId?: string; refundId?: string; topUpId?: string }): Credit | DebitRefused {
    if (amount.minor <= 0n) throw new RangeError('A movement must be positive');
    const r = this.row(orgId, amount.currency);
    if (direction === 'debit' && r.available < amount.minor) return { refused: true, available: Money.ofMinor(amount.currency, r.available) };
    r.available += direction === 'credit' ? amount.minor : -amount.minor;
    this.entries.push({ orgId, kind, amount, operationId: ids.refundId ?? ids.adjustmentId ?? null });
    const balance = this.toBalance(orgId, amount.currency);
    const transaction = {
      id: `wtx_${this.entries.length.toString(16).padStart(32, '0')}`, type: kind, currency: amount.currency, amount, availableAfter: balance.available,
      reservedAfter: balance.reserved, source: null, operationId: null, topUpId: ids.topUpId ?? null, createdAt: new Date(), direction, reason,
      adjustmentId: ids.adjustmentId ?? null, refundId: ids.refundId ?? null,
      description: describeTransaction({
        type: kind === 'refund' ? 'refund' : direction === 'credit' ? 'adjustment_credit' : 'adjustment_debit',
        topUpId: ids.topUpId ?? null, operationId: null, subject: null, reason,
      }),
    };
    return { balance, transaction };
  }

  async balances(orgId: string): Promise<Balance[]> {
    return CURRENCIES.map((c) => this.toBalance(orgId, c));
  }

  async hold(orgId: string, amount: Money, operationId: string): Promise<HoldResult> {
    if (amount.minor <= 0n) throw new RangeError('A hold must be positive');
    const r = this.row(orgId, amount.currency);
    if (r.available < amount.minor) return { held: false, available: Money.ofMinor(amount.currency, r.available) };
    if (this.entries.some((e) => e.kind === 'hold' && e.operationId === operationId)) throw new Error('second hold for one operation');
    r.available -= amount.minor;
    r.reserved += amount.minor;
    this.entries.push({ orgId, kind: 'hold', amount, operationId });
    return { held: true, balance: this.toBalance(orgId, amount.currency) };
  }

  capture(operationId: string): Promise<Settlement | undefined> {
    return this.settle(operationId, 'capture');
  }

  release(operationId: string): Promise<Settlement | undefined> {
    return this.settle(operationId, 'release');
  }

  async settleMany(captures: readonly string[], releases: readonly string[]): Promise<void> {
    for (const id of captures) await this.settle(id, 'capture');
    for (const id of releases) await this.settle(id, 'release');
  }

  private async settle(operationId: string, kind: 'capture' | 'release'): Promise<Settlement | undefined> {
    const hold = this.entries.find((e) => e.kind === 'hold' && e.operationId === operationId);
    if (!hold) return undefined;
    if (this.entries.some((e) => (e.kind === 'capture' || e.kind === 'release') && e.operationId === operationId)) {
      throw new Error(`operation ${operationId} is settled already`);
    }
    const r = this.row(hold.orgId, hold.amount.currency);
    r.reserved -= hold.amount.minor;
    if (kind === 'release') r.available += hold.amount.minor;
    this.entries.push({ orgId: hold.orgId, kind, amount: hold.amount, operationId });
    return { orgId: hold.orgId, operationId, amount: hold.amount };
  }
}
