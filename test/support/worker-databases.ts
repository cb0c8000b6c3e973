/**
 * PostgreSQL test runs (DATABASE_URL set): one database per Jest worker, `<database>_w<N>`, so
 * that files running at the same time in parallel workers never share a database. Each file
 * still makes its own schema in it (database.ts); the per-worker database keeps apart what a
 * schema does not: pg_stat_activity (tests that pick the app's backends by application_name),
 * LISTEN/NOTIFY channels (operations signals), advisory locks.
 *
 * - globalSetup (jest-global-setup.ts, once, in Jest's parent process): creates the databases of
 *   workers 1..maxWorkers when they do not exist. They are kept after the run (empty: every file
 *   drops its schema); .ci/run drops its own.
 * - setupFiles (jest-setup-file.ts, each test file, in its worker): points
 *   process.env.DATABASE_URL at the worker's database (JEST_WORKER_ID; 1 with --runInBand). Jest
 *   gives each file its own process.env. TEST_WORKER_DATABASE=off keeps the database of
 *   DATABASE_URL itself.
 */
import { Client } from 'pg';

export function workerDatabase(base: string, worker: string | number): { url: string; name: string } {
  const url = new URL(base);
  const name = `${decodeURIComponent(url.pathname.replace(/^\//, '')) || 'postgres'}_w${worker}`;
  url.pathname = `/${encodeURIComponent(name)}`;
  return { url: url.toString(), name };
}

export async function createWorkerDatabases(maxWorkers: number): Promise<void> {
  const base = process.env.DATABASE_URL;
  if (!base || process.env.TEST_WORKER_DATABASE === 'off') return;
  const admin = new Client({ connectionString: base });
  await admin.connect();
  try {
    for (let w = 1; w <= Math.max(1, maxWorkers); w++) {
      const { name } = workerDatabase(base, w);
      const { rows } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (rows.length > 0) continue;
      await admin.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`).catch((err: { code?: string }) => {
        // Another run created it in between (42P04 duplicate_database): use it.
        if (err.code !== '42P04') throw err;
      });
    }
  } finally {
    await admin.end();
  }
}

export function pointAtWorkerDatabase(): void {
  const base = process.env.DATABASE_URL;
  if (!base || process.env.TEST_WORKER_DATABASE === 'off') return;
  process.env.DATABASE_URL = workerDatabase(base, process.env.JEST_WORKER_ID ?? '1').url;
}
