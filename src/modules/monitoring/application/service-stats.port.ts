import type { Currency } from '../../../shared/kernel/money/money';

export interface OperationCount {
  type: string;
  status: string;
  count: number;
}

export interface HoldTotals {
  currency: Currency;
  /** Holds of operations still pending or running, not yet captured or released. */
  outstanding: number;
  /** Sum of the wallets' reserved balances, in minor units (USD 1e-5, IDR 1). */
  reservedMinor: bigint;
}

/** Figures read from the database when Prometheus scrapes. */
export abstract class ServiceStats {
  /** Unfinished operations (pending, running) by type and status; finished ones are not counted (that would scan the table). */
  abstract operationCounts(): Promise<OperationCount[]>;
  /** Creation time of the oldest operation still pending; null when none is. */
  abstract oldestPendingOperation(): Promise<Date | null>;
  /** One entry per currency. */
  abstract holds(): Promise<HoldTotals[]>;
}
