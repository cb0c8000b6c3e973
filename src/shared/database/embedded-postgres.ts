import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { Logger } from '@nestjs/common';
import { installedPgliteVersion, readTemplate, templatePath, unpackTemplate } from './embedded-template';

/** In-memory embedded database (tests): nothing is written to disk. */
export const MEMORY_DATA_DIR = 'memory://';

export interface EmbeddedPostgres {
  url: string;
  /** The data directory as a gzipped tar that `memoryImage` accepts (PGlite's dumpDataDir). */
  dump(): Promise<Blob>;
  stop(): Promise<void>;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * PGlite does not lock its data directory, and two processes on one directory lose writes.
 * Take a lock file holding our pid; refuse when a live process holds it.
 */
function lockDataDir(dir: string): () => void {
  const lockPath = join(dir, '.cds.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(lockPath, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(readFileSync(lockPath, 'utf8'));
      if (Number.isInteger(holder) && holder > 0 && processAlive(holder)) {
        throw new Error(
          `The embedded database in ${dir} is in use by process ${holder}. ` +
            'Stop it, or set DATA_DIR to another directory, or set DATABASE_URL to a PostgreSQL server.',
        );
      }
      rmSync(lockPath, { force: true }); // stale lock of a dead process
    }
  }
  throw new Error(`Could not lock the embedded database directory ${dir}`);
}

/**
 * PostgreSQL settings of the embedded engine, after PGlite's own start parameters. PGlite keeps
 * PostgreSQL's server defaults (shared_buffers 128 MB, maintenance_work_mem 64 MB) inside its
 * WebAssembly memory, which never shrinks; these sizes suit one process serving one small
 * database (README, Benchmarks and memory).
 */
export const EMBEDDED_POSTGRES_SETTINGS: Record<string, string> = {
  shared_buffers: '16MB',
  maintenance_work_mem: '16MB',
  work_mem: '4MB',
  temp_buffers: '1MB',
};

export function embeddedOptions(): { startParams: string[] } {
  const settings = Object.entries(EMBEDDED_POSTGRES_SETTINGS).flatMap(([k, v]) => ['-c', `${k}=${v}`]);
  return { startParams: [...PGlite.defaultStartParams, ...settings] };
}

/** The script that creates a new data directory in a child process (compiled next to this file). */
const INITDB_SCRIPT = join(__dirname, 'embedded-initdb.js');

/**
 * initdb in a short-lived child process, for a PGlite version with no template (README,
 * "Embedded engine: first start from a template"): PGlite's initdb runs two more WebAssembly
 * instances and copies the new directory through memory, about 500 MB that the server process
 * would keep for its whole life (WebAssembly memory is not returned); the child gives it back
 * when it exits. Without the compiled script (tests running TypeScript) initdb runs in this
 * process, as PGlite does by default.
 */
async function initdbInChild(pgdata: string): Promise<void> {
  if (!existsSync(INITDB_SCRIPT)) return;
  await new Promise<void>((resolvePromise, reject) => {
    const child = spawn(process.execPath, [INITDB_SCRIPT, pgdata], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (b: Buffer) => {
      stderr = (stderr + b.toString()).slice(-4000);
    });
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolvePromise() : reject(new Error(`Creating the embedded database in ${pgdata} failed (exit ${code}): ${stderr.trim()}`)),
    );
  });
}

let warnedNoTemplate = false;

function warnNoTemplate(): void {
  if (warnedNoTemplate) return;
  warnedNoTemplate = true;
  new Logger('EmbeddedPostgres').warn(
    `No template of the embedded database for PGlite ${installedPgliteVersion()} (${templatePath()}): ` +
      'a new database runs initdb (about 700 MB for a few seconds). Make the template with `npm run embedded:template`.',
  );
}

/**
 * Opens PGlite on the directory `pgdata`, or in memory (MEMORY_DATA_DIR). A new database comes
 * from the template of the installed PGlite (embedded-template.ts): no initdb, no second
 * WebAssembly instance. A directory is unpacked before PGlite starts; in memory PGlite loads it
 * (`loadDataDir`). Without a template: initdb, in a child process for a directory, and a warning.
 */
async function openPglite(pgdata: string, memoryImage?: Blob): Promise<PGlite> {
  if (pgdata === MEMORY_DATA_DIR) {
    const template = memoryImage ?? readTemplate();
    if (!template) warnNoTemplate();
    return PGlite.create({ ...embeddedOptions(), ...(template ? { loadDataDir: template } : {}) });
  }
  if (!existsSync(join(pgdata, 'PG_VERSION')) && !(await unpackTemplate(pgdata))) {
    warnNoTemplate();
    await initdbInChild(pgdata);
  }
  return PGlite.create(pgdata, embeddedOptions());
}

/**
 * Starts embedded PostgreSQL (PGlite) behind a PostgreSQL wire-protocol socket on 127.0.0.1,
 * so the ordinary `pg` driver and TypeORM talk to it exactly as to a PostgreSQL server.
 * `memoryImage` (in memory only): the data directory to start from instead of the empty
 * template, a dump() of another instance (the tests start every app from one migrated image).
 */
export async function startEmbeddedPostgres(dataDir: string, maxConnections: number, memoryImage?: Blob): Promise<EmbeddedPostgres> {
  let unlock = (): void => undefined;
  let db: PGlite;
  if (dataDir === MEMORY_DATA_DIR) {
    db = await openPglite(MEMORY_DATA_DIR, memoryImage);
  } else {
    const dir = resolve(dataDir);
    mkdirSync(dirname(dir), { recursive: true });
    mkdirSync(dir, { recursive: true });
    unlock = lockDataDir(dir);
    try {
      db = await openPglite(join(dir, 'pgdata'));
    } catch (err) {
      unlock();
      throw err;
    }
  }
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections });
  await server.start();
  const [host, port] = server.getServerConn().split(':');
  return {
    url: `postgresql://postgres@${host}:${port}/postgres`,
    dump: () => db.dumpDataDir('gzip'),
    async stop() {
      await server.stop();
      await db.close();
      unlock();
    },
  };
}
