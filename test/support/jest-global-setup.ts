/** Jest globalSetup: the per-worker PostgreSQL databases (worker-databases.ts) and the run's cache (test-run-cache.ts). */
import { prepareTestRunCache } from './test-run-cache';
import { createWorkerDatabases } from './worker-databases';

export default async function globalSetup(globalConfig: { maxWorkers: number }): Promise<void> {
  await createWorkerDatabases(globalConfig.maxWorkers);
  await prepareTestRunCache();
}
