/** One thing found wrong by an invariant check. */
export interface Violation {
  /** The check's name, e.g. `wallet.available_matches_ledger`. */
  check: string;
  /** What is wrong: `org_acme/USD`, `op_...`, `vm_...`. */
  subject: string;
  message: string;
  /** The figures behind it (amounts as strings of minor units, counts as numbers). */
  details: Record<string, string | number | null>;
}

export type Finding = Omit<Violation, 'check'>;

/**
 * One invariant the service promises, checked against the stored state. It only reads, and runs
 * inside the snapshot the use case opens (every check sees the same instant).
 */
export interface InvariantCheck {
  /** Stable, dotted: `<area>.<what holds>`. */
  readonly name: string;
  /** What holds, in one sentence. */
  readonly description: string;
  /** Everything that breaks the invariant; empty when it holds. */
  findViolations(): Promise<Finding[]>;
}

/**
 * Port: every invariant check of the service. To add one, implement InvariantCheck in the
 * adapter and list it there; the use case, the CLI and the chaos run pick it up.
 */
export abstract class InvariantChecks {
  abstract all(): readonly InvariantCheck[];
}
