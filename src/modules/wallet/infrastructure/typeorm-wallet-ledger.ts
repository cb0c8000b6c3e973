import { Injectable } from '@nestjs/common';
import { Db } from '../../../shared/database/transaction';
import { CURRENCIES, Currency, Money } from '../../../shared/kernel/money/money';
import { Balance, WalletLedger } from '../application/wallet.port';

interface BalanceRow {
  currency: Currency;
  available: string;
  reserved: string;
}

export const toBalance = (r: BalanceRow): Balance => ({
  currency: r.currency,
  available: Money.ofMinor(r.currency, BigInt(r.available)),
  reserved: Money.ofMinor(r.currency, BigInt(r.reserved)),
});

@Injectable()
export class TypeOrmWalletLedger extends WalletLedger {
  constructor(protected readonly db: Db) {
    super();
  }

  async credit(orgId: string, amount: Money, memo: string): Promise<Balance> {
    if (amount.minor <= 0n) throw new RangeError('A credit must be positive');
    const [row] = await this.db.query<BalanceRow>(
      `INSERT INTO wallet_balances (org_id, currency, available) VALUES ($1, $2, $3)
       ON CONFLICT (org_id, currency) DO UPDATE
         SET available = wallet_balances.available + EXCLUDED.available, updated_at = now()
       RETURNING currency, available::text, reserved::text`,
      [orgId, amount.currency, amount.minor.toString()],
    );
    await this.db.query(`INSERT INTO wallet_ledger (org_id, currency, kind, amount, memo) VALUES ($1, $2, 'credit', $3, $4)`, [
      orgId,
      amount.currency,
      amount.minor.toString(),
      memo,
    ]);
    return toBalance(row);
  }

  async balances(orgId: string): Promise<Balance[]> {
    const rows = await this.db.query<BalanceRow>(
      'SELECT currency, available::text, reserved::text FROM wallet_balances WHERE org_id = $1',
      [orgId],
    );
    return CURRENCIES.map((currency) => {
      const row = rows.find((r) => r.currency === currency);
      return row ? toBalance(row) : { currency, available: Money.zero(currency), reserved: Money.zero(currency) };
    });
  }
}
