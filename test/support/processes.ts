import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scaled } from './deadlines';
import { trackDir, trackProcess, untrackDir } from './leftovers';
import { waitFor } from './renewals';
import { pooledProcessEnv } from './test-pgbouncer';

export const ROOT = join(__dirname, '../..');

/** Builds dist/ when it is missing (npm test builds it first; a lone `npx jest` may not have). */
export function ensureBuilt(): void {
  if (existsSync(join(ROOT, 'dist/src/main.js')) && existsSync(join(ROOT, 'dist/src/cli/main.js'))) return;
  const r = spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`build failed: ${r.stdout}${r.stderr}`);
}

/** A TCP port free on 127.0.0.1 when asked (tests never use fixed ports: files run in parallel). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const address = s.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** A temporary folder, removed by `remove()` or, if a failure skips that, by the run's teardown. */
export function tempDir(prefix: string): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  trackDir(path);
  return {
    path,
    remove: () => {
      rmSync(path, { recursive: true, force: true });
      untrackDir(path);
    },
  };
}

/** The environment of a child process: this one's, minus settings that would leak into it. */
export function childEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const k of ['DATABASE_URL', 'DATABASE_POOL_MODE', 'DATABASE_DIRECT_URL', 'REDIS_URL', 'DATA_DIR', 'PORT', 'NODE_ENV', 'TEST_PGBOUNCER_PORT']) delete base[k];
  const out: NodeJS.ProcessEnv = { ...base };
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  pooledProcessEnv(out);
  return out;
}

/** Sends `signal` to the child's process group (it was started detached), or to the child alone. */
export function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (!child.pid || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    child.kill(signal);
  }
}

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  /** Everything the process wrote so far, stdout and stderr. */
  output(): string;
  /** Sends the signal and resolves with the exit code (null when killed by a signal). */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<number | null>;
}

/**
 * Starts `node dist/src/main.js` and resolves once it prints the URL it listens on (within
 * `timeoutMs` on a quiet machine, stretched by the load: deadlines.ts). That line is an info log:
 * LOG_LEVEL must stay at info or lower (silent, error or warn hide it). The process leads its own
 * process group, recorded until it exits (leftovers.ts): a failed test leaves nothing running.
 */
export async function startServerProcess(env: Record<string, string | undefined>, timeoutMs = 30000): Promise<ServerProcess> {
  ensureBuilt();
  timeoutMs = scaled(timeoutMs);
  const child = spawn(process.execPath, ['dist/src/main.js'], {
    cwd: ROOT,
    env: childEnv({ PORT: '0', METRICS_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  trackProcess(child);
  let out = '';
  child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start in ${timeoutMs} ms:\n${out}`)), timeoutMs);
    const check = (): void => {
      const m = /listening on (http:\/\/localhost:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout!.on('data', check);
    child.stderr!.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${out}`));
    });
  }).catch((e: unknown) => {
    signalGroup(child, 'SIGKILL');
    throw e;
  });
  return {
    child,
    url,
    output: () => out,
    /** The signal to the process group; a process still running `graceMs` (stretched) after it gets SIGKILL. */
    async stop(signal: NodeJS.Signals = 'SIGTERM', graceMs = 15000) {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      signalGroup(child, signal);
      if (signal === 'SIGKILL') return exited;
      const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), scaled(graceMs));
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** Runs the operator CLI as a user would: `node dist/src/cli/main.js ...args`. */
export function runCli(args: string[], env: Record<string, string | undefined>): { status: number | null; stdout: string; stderr: string } {
  ensureBuilt();
  const r = spawnSync(process.execPath, ['dist/src/cli/main.js', ...args], { cwd: ROOT, env: childEnv(env), encoding: 'utf8', timeout: scaled(60000) });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * One worker process (WORKER_ENABLED=true) that a test lets run only at chosen moments, instead
 * of starting a new one each time (a process start costs 3-8 s on a busy 2-core machine): `run()`
 * starts it the first time and continues it (SIGCONT) later; `pause()` stops it (SIGSTOP) once
 * none of the test database's connections of the service is inside a query or a transaction
 * (pg_stat_activity: when one is, it lets the process go on a moment and tries again), so that a
 * paused worker holds no lock and no claimed operation; `stop()` continues and ends it (SIGTERM),
 * resolving with its exit code. PostgreSQL only (the embedded engine serves one process).
 */
export function pausableWorker(env: Record<string, string | undefined>): {
  run(): Promise<ServerProcess>;
  pause(): Promise<void>;
  stop(): Promise<number | null>;
} {
  let worker: ServerProcess | undefined;
  let paused = false;
  /** The service's connections to the test database inside a query or a transaction now (what they run). */
  const busyConnections = async (): Promise<string[]> => {
    const { Client } = await import('pg');
    const c = new Client({ connectionString: env.DATABASE_URL });
    await c.connect();
    try {
      const r = await c.query<{ busy: string }>(
        `SELECT application_name || ' ' || state || ': ' || left(query, 200) AS busy FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name LIKE 'cloud-disk-service%' AND state <> 'idle'`,
      );
      return r.rows.map((row) => row.busy);
    } finally {
      await c.end();
    }
  };
  return {
    async run() {
      if (!worker) worker = await startServerProcess({ ...env, WORKER_ENABLED: 'true' });
      else if (paused) signalGroup(worker.child, 'SIGCONT');
      paused = false;
      return worker;
    },
    async pause() {
      if (!worker || paused) return;
      const deadline = Date.now() + scaled(15_000);
      for (;;) {
        signalGroup(worker.child, 'SIGSTOP');
        const busy = await busyConnections();
        if (busy.length === 0) break;
        signalGroup(worker.child, 'SIGCONT');
        if (Date.now() > deadline) throw new Error(`the worker could not be paused: connections stayed busy:\n${busy.join('\n')}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      paused = true;
    },
    async stop() {
      if (!worker) return 0;
      if (paused) signalGroup(worker.child, 'SIGCONT');
      paused = false;
      return worker.stop();
    },
  };
}

/**
 * The CLI's own code in this process (src/cli/run-cli.ts, what dist/src/cli/main.js runs: the same
 * parsing, forwarding to a running server, application context per command and printed output),
 * without a process start (2-5 s each on a busy 2-core machine). A file testing the CLI keeps at
 * least one real process (runCli) per command; the other cases of a command run here.
 */
export async function runCliInProcess(args: string[], env: Record<string, string | undefined>, cwd = ROOT): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const { cliOutcome, printedOutcome } = await import('../../src/cli/run-cli');
  return printedOutcome(await cliOutcome(args, childEnv(env), cwd));
}

type Sql = <T = Record<string, unknown>>(text: string, params?: unknown[]) => Promise<T[]>;

const countOf = async (sql: Sql, where: string): Promise<number> => Number((await sql<{ n: string }>(`SELECT count(*) AS n FROM operations WHERE ${where}`))[0].n);

/**
 * Worker processes on one test database for the SIGKILL tests: each runs the operations worker
 * every 50 ms with a 2 s lease and a compute/storage provider whose calls take 300 ms, so that a
 * kill lands while operations are mid-step. A test accepts its operations through `api()`, a
 * process that runs no worker, so none can end before a worker is killed mid-step (on a loaded
 * machine the answers took longer than the worker's work). `killMidStepAndFinish` then starts a
 * worker, waits until `midStep` operations are inside a step, SIGKILLs it (ended by the signal,
 * with operations left unfinished), starts another and waits until every operation has ended.
 * `killAll()` (afterAll) SIGKILLs whatever is left.
 */
export function slowProviderWorkers(databaseUrl: () => string | undefined): {
  /** A process of the cluster that answers the API and runs no worker. */
  api(): Promise<ServerProcess>;
  killMidStepAndFinish(sql: Sql, midStep: number): Promise<void>;
  killAll(): Promise<void>;
} {
  const running: ServerProcess[] = [];
  const start = async (env: NodeJS.ProcessEnv = {}): Promise<ServerProcess> => {
    const p = await startServerProcess({
      DATABASE_URL: databaseUrl(),
      DEMO_SEED: 'false',
      WORKER_ENABLED: 'true',
      WORKER_INTERVAL_MS: '50',
      WORKER_LEASE_MS: '2000',
      PROVIDER_LATENCY_MS: '300',
      DB_POOL_SIZE: '5',
      ...env,
    });
    running.push(p);
    return p;
  };
  return {
    api: () => start({ WORKER_ENABLED: 'false' }),
    async killMidStepAndFinish(sql, midStep) {
      const victim = await start();
      await waitFor('operations mid-step', async () => (await countOf(sql, `status = 'running' AND steps @> '[{"status": "running"}]'`)) >= midStep, 30_000, 10);
      expect(await victim.stop('SIGKILL')).toBeNull();
      expect(await countOf(sql, `status IN ('pending', 'running')`)).toBeGreaterThan(0);
      await start();
      await waitFor('every operation to end', async () => (await countOf(sql, `status IN ('pending', 'running')`)) === 0, 90_000, 100);
    },
    async killAll() {
      for (const p of running) await p.stop('SIGKILL');
    },
  };
}
