/**
 * TEST_PGBOUNCER=1 (with DATABASE_URL, a PostgreSQL server): the app under test reaches
 * PostgreSQL as a pooled deployment does, through a PgBouncer in transaction mode
 * (bench/pgbouncer.ts: Debian's package, installed when missing) with DATABASE_POOL_MODE=
 * transaction, and takes LISTEN/NOTIFY on DATABASE_DIRECT_URL, the server itself.
 *
 * - globalSetup (once, Jest's parent process) starts one PgBouncer in front of the server of
 *   DATABASE_URL and puts its port in TEST_PGBOUNCER_PORT, which Jest's workers inherit;
 *   globalTeardown stops it.
 * - Each test app (test-app.ts, database.ts) gets a database of its own instead of a schema:
 *   PgBouncer 1.18 does not pass the `options` startup parameter that selects a schema's
 *   search_path, and a SET would be session state. Its DATABASE_URL is the pooler's URL of that
 *   database, its DATABASE_DIRECT_URL the server's.
 * - process.env.DATABASE_URL stays the server (the worker's database): what tests read with
 *   their own SQL clients, and what processes they start themselves are given, is direct.
 */
import { PgBouncer, startPgBouncer } from '../../bench/pgbouncer';

const KEY = '__cdsTestPgBouncer';

export const testPgBouncerWanted = (): boolean => process.env.TEST_PGBOUNCER === '1' && Boolean(process.env.DATABASE_URL);

/** The pooler's port when this run goes through one (set by the global setup). */
export const testPgBouncerPort = (): number | undefined => (process.env.TEST_PGBOUNCER_PORT ? Number(process.env.TEST_PGBOUNCER_PORT) : undefined);

export async function startTestPgBouncer(maxWorkers: number): Promise<void> {
  if (!testPgBouncerWanted()) return;
  const base = new URL(process.env.DATABASE_URL!);
  const bouncer = await startPgBouncer({
    serverHost: base.hostname,
    serverPort: Number(base.port || 5432),
    users: [decodeURIComponent(base.username) || 'postgres'],
    // Enough server connections for every worker's app and the processes a test starts.
    poolSize: 10 * Math.max(1, maxWorkers),
  });
  (globalThis as Record<string, unknown>)[KEY] = bouncer;
  process.env.TEST_PGBOUNCER_PORT = String(bouncer.port);
  process.stdout.write(`\nTEST_PGBOUNCER=1: the apps under test reach PostgreSQL through PgBouncer in transaction mode on 127.0.0.1:${bouncer.port}\n`);
}

export async function stopTestPgBouncer(): Promise<void> {
  const bouncer = (globalThis as Record<string, unknown>)[KEY] as PgBouncer | undefined;
  if (!bouncer) return;
  delete (globalThis as Record<string, unknown>)[KEY];
  await bouncer.stop();
}

/** `directUrl` with its host and port replaced by the pooler's. */
export function pooledUrl(directUrl: string, port: number): string {
  const url = new URL(directUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return url.toString();
}

/**
 * For a process a test starts: when its DATABASE_URL is the run's pooler and it was given no
 * pool mode, DATABASE_POOL_MODE=transaction and DATABASE_DIRECT_URL the same database on the
 * server (that of process.env.DATABASE_URL), as a pooled deployment sets them.
 */
export function pooledProcessEnv(env: NodeJS.ProcessEnv): void {
  const port = testPgBouncerPort();
  const server = process.env.DATABASE_URL;
  if (port === undefined || !server || !env.DATABASE_URL || env.DATABASE_POOL_MODE) return;
  const url = new URL(env.DATABASE_URL);
  if (url.hostname !== '127.0.0.1' || Number(url.port) !== port) return;
  const s = new URL(server);
  url.hostname = s.hostname;
  url.port = s.port;
  env.DATABASE_POOL_MODE = 'transaction';
  env.DATABASE_DIRECT_URL = url.toString();
}
