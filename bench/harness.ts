/**
 * What the benchmarks share: their own server processes on their own database (a temporary
 * embedded DATA_DIR or a fresh PostgreSQL schema, removed at the end), free loopback ports, and the
 * server's resident memory from /proc. bench/renewal.ts has copies of these from before; it should
 * import them from here when it is folded into `npm run bench`.
 */
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { childEnv as processEnv, freePort } from './processes';

export { freePort };

export const ROOT = join(__dirname, '../..');
export const LOCAL_HOSTS = ['127.0.0.1', 'localhost'];
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * The node options `npm start` gives the server (the V8 heap settings of package.json's start
 * script, also the image's CMD): the benchmarks measure the server as it runs in production.
 */
export function startNodeArgs(): string[] {
  const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  const words = scripts.start.split(/\s+/);
  if (words[0] !== 'node' || words[words.length - 1] !== 'dist/src/main.js') throw new Error(`package.json start is not "node [options] dist/src/main.js": ${scripts.start}`);
  return words.slice(1, -1);
}

/** Kibibytes of resident memory of a process (VmRSS), null where unavailable. */
export function rssKb(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}
let clockTicks: number | undefined;

/** Milliseconds of CPU (user + system) a process has used so far, null where unavailable. */
export function cpuMs(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    // Fields after the command (which may hold spaces) in /proc/PID/stat: utime and stime are the 12th and 13th.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
    clockTicks ??= Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks;
  } catch {
    return null;
  }
}

/**
 * CPU milliseconds used so far by the PostgreSQL backends of the server under test (its
 * connections to this database, by application_name), per backend pid. PostgreSQL only.
 */
export async function backendCpuMs(db: Database): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  if (!db.client) return out;
  const { rows } = await db.client.query<{ pid: number }>(
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'cloud-disk-service%'",
  );
  for (const { pid } of rows) {
    const ms = cpuMs(pid);
    if (ms !== null) out.set(pid, ms);
  }
  return out;
}

/** CPU the backends used between two backendCpuMs() readings (backends opened in between count from 0). */
export function backendCpuSpent(before: Map<number, number>, after: Map<number, number>): number {
  let sum = 0;
  for (const [pid, ms] of after) sum += ms - (before.get(pid) ?? 0);
  return sum;
}

export const mib = (kb: number | null): number | null => (kb === null ? null : Math.round(kb / 102.4) / 10);

/** Peak and last RSS of a process, sampled every `everyMs` until stopped. */
export function rssSampler(pid: number | undefined, everyMs: number): { peakKb(): number; reset(): void; stop(): void } {
  let peak = 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, rssKb(pid) ?? 0);
  }, everyMs);
  return {
    peakKb: () => Math.max(peak, rssKb(pid) ?? 0),
    reset: () => {
      peak = rssKb(pid) ?? 0;
    },
    stop: () => clearInterval(timer),
  };
}


/** The child's environment: this process's, minus the benchmark's own settings. */
export const childEnv = (extra: Record<string, string>): NodeJS.ProcessEnv =>
  processEnv(extra, ['ORGS', 'SERVERS', 'VOLUMES', 'CONNECTIONS', 'BENCH_OUT']);

export interface Database {
  engine: 'embedded' | 'postgresql';
  /** Where the data is: the DATA_DIR, or the schema. */
  where: string;
  /** The schema (PostgreSQL only). */
  schema?: string;
  env: Record<string, string>;
  /** An admin connection to the server (PostgreSQL only), open until drop(). */
  client?: Client;
  drop(): Promise<void>;
}

export async function createDatabase(label: string): Promise<Database> {
  const base = process.env.DATABASE_URL;
  if (!base) {
    const dir = mkdtempSync(join(tmpdir(), `cds-bench-${label}-`));
    return { engine: 'embedded', where: `DATA_DIR ${dir}`, env: { DATA_DIR: dir }, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const parsed = new URL(base);
  if (!LOCAL_HOSTS.includes(parsed.hostname)) throw new Error('DATABASE_URL must name a server on 127.0.0.1 or localhost (the bench loads the local machine only)');
  const schema = `bench_${randomBytes(6).toString('hex')}`;
  const admin = new Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  parsed.searchParams.set('options', `-c search_path=${schema}`);
  return {
    engine: 'postgresql',
    where: `schema ${schema}`,
    schema,
    env: { DATABASE_URL: parsed.toString() },
    client: admin,
    async drop() {
      try {
        await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      } finally {
        await admin.end();
      }
    },
  };
}

/**
 * Refreshes the planner's statistics of the bench's tables after the seed (PostgreSQL only), as
 * autovacuum would within a minute on a server that runs it (this machine's server does not):
 * the service is measured on a database at steady state, not one the planner knows nothing of.
 */
export async function analyze(db: Database): Promise<void> {
  if (!db.client || !db.schema) return;
  const { rows } = await db.client.query<{ tablename: string }>('SELECT tablename FROM pg_tables WHERE schemaname = $1', [db.schema]);
  for (const { tablename } of rows) await db.client.query(`ANALYZE ${db.schema}."${tablename}"`);
}

export interface Child {
  child: ChildProcess;
  port: number;
  output(): string;
  stop(): Promise<void>;
}

export function spawnNode(script: string, env: NodeJS.ProcessEnv, port: number, nodeArgs: string[] = []): Child {
  const child = spawn(process.execPath, [...nodeArgs, script], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const keep = (b: Buffer): void => {
    out = (out + b.toString()).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    port,
    output: () => out,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

