/** Jest globalSetup: the per-worker PostgreSQL databases (worker-databases.ts), the run's cache (test-run-cache.ts), and with TEST_PGBOUNCER=1 the run's PgBouncer (test-pgbouncer.ts). */
import { prepareTestRunCache } from './test-run-cache';
import { startTestPgBouncer } from './test-pgbouncer';
import { createWorkerDatabases } from './worker-databases';

export default async function globalSetup(globalConfig: { maxWorkers: number }): Promise<void> {
  await createWorkerDatabases(globalConfig.maxWorkers);
  await prepareTestRunCache();
  await startTestPgBouncer(globalConfig.maxWorkers);
}
