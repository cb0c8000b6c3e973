import { Client } from 'pg';
import { randomBase62 } from '../../src/shared/kernel/ids/ids';

/**
 * A database for one test file. With DATABASE_URL (CI, PostgreSQL 15) a fresh schema in that
 * database, reached through a URL whose search_path selects it, dropped after; without it the
 * embedded engine in memory (undefined URL).
 */
export interface TestDatabase {
  url: string | undefined;
  drop(): Promise<void>;
}

export const usingPostgres = (): boolean => Boolean(process.env.DATABASE_URL);

export async function createTestDatabase(): Promise<TestDatabase> {
  const base = process.env.DATABASE_URL;
  if (!base) return { url: undefined, drop: async () => undefined };
  const schema = `t_${randomBase62(12).toLowerCase()}`;
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
