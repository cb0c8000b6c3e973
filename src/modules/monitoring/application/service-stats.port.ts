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
  /** Pending wallet top-ups (checkout open), one entry per currency. */
  topUpsPending: { currency: Currency; count: number }[];
  /** Webhook deliveries pending (due or waiting for a retry), and the earliest due next_attempt_at (at or before `now`), or null. */
  webhooks: { pending: number; earliestDue: Date | null };
}

/** Figures read from the database when Prometheus scrapes. */
export abstract class ServiceStats {
  /** Every figure in one statement; `now` decides which webhook deliveries are due. */
  abstract snapshot(now: Date): Promise<ServiceSnapshot>;
}
