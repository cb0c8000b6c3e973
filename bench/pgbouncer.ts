/**
 * A PgBouncer of our own (Debian's `pgbouncer`, installed by bench/ensure-debian-packages.sh
 * when missing) in transaction mode, on a free port of 127.0.0.1, in front of a PostgreSQL
 * server: used by the pooled e2e test (test/e2e/pooled-transaction-mode.e2e-spec.ts) and by
 * `npm run cluster`. Every database name is passed through (`* =`), trusted for the users given.
 * PgBouncer refuses to run as root: when we are root it runs as the `postgres` user.
 *
 * The settings are the ones docs/how-to/run-at-scale.md recommends: pool_mode=transaction,
 * server_reset_query empty (nothing of a session survives a transaction anyway),
 * ignore_startup_parameters=extra_float_digits (sent by some clients, not by the service).
 */
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './processes';

const ROOT = join(__dirname, '..', __dirname.includes(`${join('dist', 'bench')}`) ? '..' : '');
const BINARY = '/usr/sbin/pgbouncer';

export interface PgBouncerOptions {
  /** The PostgreSQL server behind it. */
  serverHost?: string;
  serverPort: number;
  /** Users let in (trusted: the server behind does its own authentication). */
  users?: string[];
  /** Server connections per database and user (default_pool_size). */
  poolSize?: number;
  /**
   * Aliases in session mode, alias -> database: what a process LISTENs through
   * (DATABASE_DIRECT_URL) when it may not reach the server directly; repointed with the rest.
   */
  sessionDatabases?: Record<string, string>;
}

export interface PgBouncer {
  port: number;
  /** postgresql://user@127.0.0.1:<port>/<database> */
  url(database: string, user?: string): string;
  /** Stops it (SIGTERM, immediate shutdown: every connection cut) and starts it again on the same port. */
  restart(downMs?: number): Promise<void>;
  /** Points it at another server: rewrites its configuration and restarts it on the same port (a failover; every connection to the old server is cut). */
  repoint(serverPort: number, serverHost?: string): Promise<void>;
  /** What it logged. */
  log(): string;
  stop(): Promise<void>;
}

/** Installs PgBouncer when it is missing (Debian's package, through apt-get). */
export function ensurePgBouncer(): void {
  ensureDebianPackages(['pgbouncer']);
}

export function ensureDebianPackages(packages: string[]): void {
  const script = join(ROOT, 'bench', 'ensure-debian-packages.sh');
  const r = spawnSync('bash', [script, ...packages], { encoding: 'utf8', stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) throw new Error(`could not install ${packages.join(', ')} (bench/ensure-debian-packages.sh exited ${r.status})`);
}

/** The uid/gid to run a server that refuses root as (postgres), or undefined when we are not root. */
export function unprivilegedUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
  const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
  if (!Number.isInteger(uid) || !Number.isInteger(gid) || uid === 0) throw new Error('running as root, and there is no postgres user to run PgBouncer as');
  return { uid, gid };
}

function config(dir: string, port: number, host: string, serverPort: number, poolSize: number, sessionDatabases: Record<string, string>): string {
  return [
    '[databases]',
    ...Object.entries(sessionDatabases).map(([alias, db]) => `${alias} = host=${host} port=${serverPort} dbname=${db} pool_mode=session`),
    `* = host=${host} port=${serverPort}`,
    '',
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${join(dir, 'users.txt')}`,
    'pool_mode = transaction',
    `default_pool_size = ${poolSize}`,
    'max_client_conn = 2000',
    'max_db_connections = 0',
    'server_reset_query =',
    'ignore_startup_parameters = extra_float_digits',
    // A server that went away (failover) is given up on quickly, and retried soon after.
    'server_connect_timeout = 3',
    'server_login_retry = 1',
    'query_wait_timeout = 30',
    `pidfile = ${join(dir, 'pgbouncer.pid')}`,
    `logfile = ${join(dir, 'pgbouncer.log')}`,
    'log_connections = 0',
    'log_disconnections = 0',
    '',
  ].join('\n');
}

/** Resolves once something accepts TCP connections on 127.0.0.1:`port`, or rejects after `timeoutMs`. */
export function waitListening(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = (): void => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve();
      });
      socket.once('error', () => {
        socket.destroy();
        if (Date.now() > deadline) reject(new Error(`nothing listens on ${port} after ${timeoutMs} ms`));
        else setTimeout(attempt, 50);
      });
    };
    attempt();
  });
}

export async function startPgBouncer(options: PgBouncerOptions): Promise<PgBouncer> {
  ensurePgBouncer();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'cds-pgbouncer-'));
  const user = unprivilegedUser();
  let host = options.serverHost ?? '127.0.0.1';
  let serverPort = options.serverPort;
  const poolSize = options.poolSize ?? 20;
  const configFile = join(dir, 'pgbouncer.ini');
  const write = (): void => {
    writeFileSync(configFile, config(dir, port, host, serverPort, poolSize, options.sessionDatabases ?? {}));
    writeFileSync(join(dir, 'users.txt'), (options.users ?? ['postgres']).map((u) => `"${u}" ""`).join('\n') + '\n');
    if (user) for (const f of ['pgbouncer.ini', 'users.txt']) chownSync(join(dir, f), user.uid, user.gid);
  };
  if (user) {
    chownSync(dir, user.uid, user.gid);
    chmodSync(dir, 0o700);
  }
  write();
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const launch = async (): Promise<void> => {
    const c = spawn(BINARY, [configFile], { stdio: ['ignore', 'ignore', 'pipe'], ...(user ?? {}) });
    let err = '';
    c.stderr?.on('data', (b: Buffer) => (err = (err + b.toString()).slice(-4000)));
    child = c;
    exited = new Promise((resolve) => c.once('exit', () => resolve()));
    await Promise.race([
      waitListening(port, 10_000),
      exited.then(() => {
        throw new Error(`PgBouncer exited at start: ${err}${readLog()}`);
      }),
    ]);
  };
  const readLog = (): string => {
    try {
      return readFileSync(join(dir, 'pgbouncer.log'), 'utf8');
    } catch {
      return '';
    }
  };
  const kill = async (): Promise<void> => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    c.kill('SIGTERM');
    const timer = setTimeout(() => c.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  };
  await launch();
  return {
    port,
    url: (database, u = 'postgres') => `postgresql://${u}@127.0.0.1:${port}/${database}`,
    async restart(downMs = 0) {
      await kill();
      if (downMs > 0) await new Promise((r) => setTimeout(r, downMs));
      await launch();
    },
    async repoint(newPort, newHost) {
      serverPort = newPort;
      host = newHost ?? host;
      write();
      await kill();
      await launch();
    },
    log: readLog,
    async stop() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
