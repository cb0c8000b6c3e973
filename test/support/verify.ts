import { VerifyInvariants } from '../../src/modules/verification/application/verify-invariants.use-case';
import { TypeOrmInvariantChecks } from '../../src/modules/verification/infrastructure/typeorm-invariant-checks';
import { BlockStorage } from '../../src/modules/storage-provider/application/block-storage.port';
import { TemplateApps } from '../../src/modules/templates/application/template-apps.port';
import { ComputeProvider } from '../../src/modules/servers/application/compute-provider.port';
import { Db, UnitOfWork } from '../../src/shared/database/transaction';
import { SystemClock } from '../../src/shared/kernel/clock/clock';
import { runCli } from './processes';
import { TestApp } from './test-app';

/**
 * Runs `verify` (the operator CLI, a real process) on a PostgreSQL database and expects every
 * invariant to hold: exit 0, nothing on stderr, no violation in the report.
 */
export function expectInvariantsHold(databaseUrl: string | undefined): void {
  const r = runCli(['verify'], { DATABASE_URL: databaseUrl });
  const report = r.stdout ? (JSON.parse(r.stdout) as { ok: boolean; violations: unknown[] }) : undefined;
  expect({ status: r.status, stderr: r.stderr, violations: report?.violations }).toEqual({ status: 0, stderr: '', violations: [] });
  expect(report?.ok).toBe(true);
}

/** The same checks in the test app's process (either engine): every invariant holds. */
export async function expectVerified(t: TestApp): Promise<void> {
  const checks = new TypeOrmInvariantChecks(t.app.get(Db), t.app.get(BlockStorage), t.app.get(ComputeProvider), undefined, t.app.get(TemplateApps));
  const report = await new VerifyInvariants(t.app.get(UnitOfWork), checks, new SystemClock()).execute();
  expect(report.violations).toEqual([]);
}
