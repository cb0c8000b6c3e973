import { runCli } from './processes';

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
