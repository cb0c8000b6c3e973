import { Currency, Money } from '../../../shared/kernel/money/money';
import { WalletTransaction } from '../domain/wallet-transaction';

export interface Balance {
  currency: Currency;
  available: Money;
  reserved: Money;
}

/** A credit written: the balance after it, and its ledger row as GET /v1/wallet/transactions lists it. */
export interface Credit {
  balance: Balance;
  transaction: WalletTransaction;
}

/** The outcome of a hold: taken (with the balance after it), or refused with what was available. */
export type HoldResult = { held: true; balance: Balance } | { held: false; available: Money };

/** A hold settled by capture or release: what it was for. */
export interface Settlement {
  orgId: string;
  operationId: string;
  amount: Money;
}

/** A debit refused: available did not cover it (nothing written). */
export interface DebitRefused {
  refused: true;
  available: Money;
}

/** A wallet adjustment by staff (or the operator CLI): one record and one ledger row, with its reason. */
export interface AdjustmentInput {
  id: string;
  direction: 'credit' | 'debit';
  reason: string;
  reference: string | null;
  staffId: string | null;
}

/**
 * The prepaid wallet: one balance per organization and currency, and its append-only ledger.
 * Every method writes the balance row and the ledger row together, in the active transaction.
 */
export abstract class WalletLedger {
  /**
   * Adds credit (operator credit, seed, a paid top-up). Creates the balance row when missing.
   * With `topUpId`, the credit row names the top-up: the database refuses a second credit of it
   * (unique violation), whatever the concurrency. Returns the ledger row as written (its `seq`,
   * `created_at` and after-values assigned by the ledger's trigger), for the `wallet.credited` event.
   */
  abstract credit(orgId: string, amount: Money, memo: string, topUpId?: string): Promise<Credit>;
  /**
   * An adjustment (credit or debit of available) with its record (wallet_adjustments) and its
   * ledger row (type adjustment, its reason). A debit takes the balance row's lock first and is
   * refused (nothing written) when available is below the amount: available never goes below zero.
   * The database refuses a second ledger row for one adjustment.
   */
  abstract adjust(orgId: string, amount: Money, adjustment: AdjustmentInput): Promise<Credit | DebitRefused>;
  /**
   * The debit of a top-up's refund (type refund, naming the top-up): refused (nothing written)
   * when available is below the amount. The database refuses a second ledger row for one refund id.
   */
  abstract debitRefund(orgId: string, amount: Money, refundId: string, reason: string, topUpId: string): Promise<Credit | DebitRefused>;
  /** Every currency's balance of the organization; currencies never credited show zero. */
  abstract balances(orgId: string): Promise<Balance[]>;
  /**
   * Reserves `amount` for an operation: available drops, reserved rises, one 'hold' ledger row.
   * One atomic conditional update: refused (nothing written) when available < amount, whatever
   * the concurrency. The operation must exist (the ledger row references it). Amount > 0.
   */
  abstract hold(orgId: string, amount: Money, operationId: string): Promise<HoldResult>;
  /**
   * Charges the operation's hold: reserved drops, one 'capture' ledger row. Undefined when the
   * operation holds nothing. A second settlement of one hold is refused by the database.
   */
  abstract capture(operationId: string): Promise<Settlement | undefined>;
  /** Gives the operation's hold back: reserved drops, available rises, one 'release' ledger row. */
  abstract release(operationId: string): Promise<Settlement | undefined>;
  /**
   * capture() of every operation of `captures` and release() of every one of `releases`,
   * together: one ledger row per hold settled, each balance row written once, the balance rows
   * locked in (organization, currency) order (so concurrent batches never deadlock). Operations
   * that hold nothing are skipped; a second settlement of one hold is refused by the database.
   */
  abstract settleMany(captures: readonly string[], releases: readonly string[]): Promise<void>;
}
