import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

/** In-memory embedded database (tests): nothing is written to disk. */
export const MEMORY_DATA_DIR = 'memory://';

export interface EmbeddedPostgres {
  url: string;
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
 * Starts embedded PostgreSQL (PGlite) behind a PostgreSQL wire-protocol socket on 127.0.0.1,
 * so the ordinary `pg` driver and TypeORM talk to it exactly as to a PostgreSQL server.
 */
export async function startEmbeddedPostgres(dataDir: string, maxConnections: number): Promise<EmbeddedPostgres> {
  let unlock = (): void => undefined;
  let db: PGlite;
  if (dataDir === MEMORY_DATA_DIR) {
    db = await PGlite.create();
  } else {
    const dir = resolve(dataDir);
    mkdirSync(dirname(dir), { recursive: true });
    mkdirSync(dir, { recursive: true });
    unlock = lockDataDir(dir);
    try {
      db = await PGlite.create(join(dir, 'pgdata'));
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
    async stop() {
      await server.stop();
      await db.close();
      unlock();
    },
  };
}
