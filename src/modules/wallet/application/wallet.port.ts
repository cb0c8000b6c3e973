import { Currency, Money } from '../../../shared/kernel/money/money';

export interface Balance {
  currency: Currency;
  available: Money;
  reserved: Money;
}

/**
 * The prepaid wallet: one balance per organization and currency, and its append-only ledger.
 * Every method writes the balance row and the ledger row together, in the active transaction.
 */
export abstract class WalletLedger {
  /** Adds credit (operator top-up, seed). Creates the balance row when missing. */
  abstract credit(orgId: string, amount: Money, memo: string): Promise<Balance>;
  /** Every currency's balance of the organization; currencies never credited show zero. */
  abstract balances(orgId: string): Promise<Balance[]>;
}
