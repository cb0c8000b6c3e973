/** Jest globalTeardown: stops the run's PgBouncer (test-pgbouncer.ts), ends what failed tests left running or on disk (leftovers.ts), then removes the run's cache (test-run-cache.ts). */
import { cleanLeftovers } from './leftovers';
import { removeTestRunCache } from './test-run-cache';
import { stopTestPgBouncer } from './test-pgbouncer';

export default async function globalTeardown(): Promise<void> {
  await stopTestPgBouncer();
  const { processes, folders } = cleanLeftovers();
  if (processes > 0 || folders > 0) {
    process.stderr.write(`\nTest teardown: killed ${processes} process group(s) and removed ${folders} temporary folder(s) that failed tests left behind.\n`);
  }
  removeTestRunCache();
}
