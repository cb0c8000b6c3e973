import { Client } from 'pg';
import { randomBase62 } from '../../src/shared/kernel/ids/ids';
import { pooledUrl, testPgBouncerPort } from './test-pgbouncer';

/**
 * A database for one test file. With DATABASE_URL (CI, PostgreSQL 15) a fresh schema in that
 * database, reached through a URL whose search_path selects it, dropped after; without it the
 * embedded engine in memory (undefined URL). With TEST_PGBOUNCER=1 (test-pgbouncer.ts) a fresh
 * database instead, `url` the run's PgBouncer in transaction mode in front of it and `directUrl`
 * the server.
 */
export interface TestDatabase {
  url: string | undefined;
  /** Set when `url` is a pooler in transaction mode: the same database, past it. */
  directUrl?: string;
  drop(): Promise<void>;
}

export const usingPostgres = (): boolean => Boolean(process.env.DATABASE_URL);

export async function createTestDatabase(): Promise<TestDatabase> {
  const base = process.env.DATABASE_URL;
  if (!base) return { url: undefined, drop: async () => undefined };
  const schema = `t_${randomBase62(12).toLowerCase()}`;
  const pooler = testPgBouncerPort();
  if (pooler !== undefined) return createPooledDatabase(base, `${new URL(base).pathname.slice(1)}_${schema}`, pooler);
  const admin = new Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    async drop() {
      const c = new Client({ connectionString: base });
      await c.connect();
      await c.query(`DROP SCHEMA ${schema} CASCADE`);
      await c.end();
    },
  };
}

async function createPooledDatabase(base: string, name: string, pooler: number): Promise<TestDatabase> {
  const admin = async (sql: string): Promise<void> => {
    const c = new Client({ connectionString: base });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  await admin(`CREATE DATABASE "${name}"`);
  const direct = new URL(base);
  direct.pathname = `/${name}`;
  return {
    url: pooledUrl(direct.toString(), pooler),
    directUrl: direct.toString(),
    // FORCE: the pooler's server connections to it are still open.
    drop: () => admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
  };
}
