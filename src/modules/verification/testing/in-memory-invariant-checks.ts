import { Finding, InvariantCheck, InvariantChecks } from '../application/invariant-checks.port';

/** Checks given as plain functions, for unit tests of the use case. */
export class InMemoryInvariantChecks extends InvariantChecks {
  readonly ran: string[] = [];
  private readonly checks: InvariantCheck[];

  constructor(checks: { name: string; description?: string; find: () => Finding[] | Promise<Finding[]> }[]) {
    super();
    this.checks = checks.map((c) => ({
      name: c.name,
      description: c.description ?? c.name,
      findViolations: async () => {
        this.ran.push(c.name);
        return c.find();
      },
    }));
  }

  all(): readonly InvariantCheck[] {
    return this.checks;
  }
}
