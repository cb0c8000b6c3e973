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

/** What the gauges show, read at once. */
export interface ServiceSnapshot {
  /** Unfinished operations (pending, running) by type and status; finished ones are not counted (that would scan the table). */
  operations: OperationCount[];
  /** Creation time of the oldest operation still pending; null when none is. */
  oldestPending: Date | null;
  /** One entry per currency. */
  holds: HoldTotals[];
}

/** Figures read from the database when Prometheus scrapes. */
export abstract class ServiceStats {
  /** Every figure in one statement. */
  abstract snapshot(): Promise<ServiceSnapshot>;
}
