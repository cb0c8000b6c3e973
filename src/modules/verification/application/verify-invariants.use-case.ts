import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { InvariantChecks, Violation } from './invariant-checks.port';

export interface VerificationReport {
  ok: boolean;
  checked_at: string;
  /** Every check run, in order, with its number of violations. */
  checks: { name: string; description: string; violations: number }[];
  violations: Violation[];
}

/**
 * `npm run cli -- verify`: runs every invariant check in one read-only REPEATABLE READ
 * transaction (one snapshot, nothing written) and reports each violation by check name.
 */
@Injectable()
export class VerifyInvariants {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly checks: InvariantChecks,
    private readonly clock: Clock,
  ) {}

  execute(): Promise<VerificationReport> {
    return this.uow.readSnapshot(async () => {
      const checkedAt = this.clock.now();
      const checks: VerificationReport['checks'] = [];
      const violations: Violation[] = [];
      // One after another: a transaction runs one statement at a time.
      for (const check of this.checks.all()) {
        const found = await check.findViolations();
        checks.push({ name: check.name, description: check.description, violations: found.length });
        violations.push(...found.map((f) => ({ check: check.name, ...f })));
      }
      return { ok: violations.length === 0, checked_at: checkedAt.toISOString(), checks, violations };
    });
  }
}
