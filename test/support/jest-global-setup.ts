/** Jest globalSetup: the per-worker PostgreSQL databases (worker-databases.ts). */
import { createWorkerDatabases } from './worker-databases';

export default async function globalSetup(globalConfig: { maxWorkers: number }): Promise<void> {
  await createWorkerDatabases(globalConfig.maxWorkers);
}
