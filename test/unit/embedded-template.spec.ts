import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Client } from 'pg';
import { MIGRATIONS } from '../../migrations';
import { loadSettings } from '../../src/shared/config/settings';
import { openDatabase } from '../../src/shared/database/data-source';
import { MEMORY_DATA_DIR, startEmbeddedPostgres } from '../../src/shared/database/embedded-postgres';
import { TEMPLATE_DIR, templatePath, unpackTemplate } from '../../src/shared/database/embedded-template';
import { tempDir } from '../support/processes';

/** The system identifier in a data directory's global/pg_control (its first 8 bytes, little-endian). */
const systemIdentifier = (pgdata: string): string => readFileSync(join(pgdata, 'global', 'pg_control')).readBigUInt64LE(0).toString();

/**
 * The embedded engine's first start unpacks embedded/pgdata-pglite-<version>.tar.gz instead of
 * running PGlite's initdb (README, "Embedded engine: first start from a template").
 */
describe('embedded database template', () => {
  let dir: ReturnType<typeof tempDir>;
  let templateId: string;

  beforeAll(async () => {
    dir = tempDir('cds-template-');
    // The template's own identifier, read from an unpacked copy: a database made from it carries it.
    if (existsSync(templatePath())) {
      await unpackTemplate(join(dir.path, 'unpacked'));
      templateId = systemIdentifier(join(dir.path, 'unpacked'));
    }
  });
  afterAll(() => dir?.remove());

  it('exists for the installed PGlite version (after upgrading PGlite: npm run embedded:template, and commit it)', () => {
    expect(existsSync(TEMPLATE_DIR) ? readdirSync(TEMPLATE_DIR) : []).toContain(basename(templatePath()));
  });

  it('gives a new DATA_DIR a working database: migrations apply, data is kept across a restart', async () => {
    const settings = { ...loadSettings({ NODE_ENV: 'test' }), databaseUrl: undefined, dataDir: join(dir.path, 'data'), migrationsRun: true };
    const first = await openDatabase(settings);
    try {
      expect(first.engine).toBe('embedded');
      const [{ id }] = await first.dataSource.query<{ id: string }[]>('SELECT system_identifier::text AS id FROM pg_control_system()');
      expect(id).toBe(templateId);
      const applied = await first.dataSource.query<{ n: number }[]>('SELECT count(*)::int AS n FROM schema_migrations');
      expect(applied).toEqual([{ n: MIGRATIONS.length }]);
      await first.dataSource.query('CREATE TABLE kept (note text)');
      await first.dataSource.query("INSERT INTO kept VALUES ('from the first start')");
    } finally {
      await first.close();
    }

    const second = await openDatabase(settings);
    try {
      expect(await second.dataSource.showMigrations()).toBe(false);
      expect(await second.dataSource.query('SELECT note FROM kept')).toEqual([{ note: 'from the first start' }]);
      // The same encoding and locale as a database PGlite's initdb makes.
      const [db] = await second.dataSource.query<{ encoding: string; collate: string; ctype: string }[]>(
        "SELECT pg_encoding_to_char(encoding) AS encoding, datcollate AS collate, datctype AS ctype FROM pg_database WHERE datname = 'postgres'",
      );
      expect(db).toEqual({ encoding: 'UTF8', collate: 'C', ctype: 'C.UTF-8' });
    } finally {
      await second.close();
    }
  });

  it('is the in-memory engine of the tests too', async () => {
    const engine = await startEmbeddedPostgres(MEMORY_DATA_DIR, 1);
    const client = new Client({ connectionString: engine.url });
    try {
      await client.connect();
      const { rows } = await client.query<{ id: string }>('SELECT system_identifier::text AS id FROM pg_control_system()');
      expect(rows).toEqual([{ id: templateId }]);
    } finally {
      await client.end();
      await engine.stop();
    }
  });

  it("keeps the service's one connection open: the socket refuses a new connection while the previous one is closing", async () => {
    // What the pool must never do: close its idle client (pg's default after 10 s) and open
    // another for the next query. Done by hand here, the new connection is refused.
    const engine = await startEmbeddedPostgres(MEMORY_DATA_DIR, 1);
    try {
      const first = new Client({ connectionString: engine.url });
      await first.connect();
      const closing = first.end();
      const second = new Client({ connectionString: engine.url });
      await expect(second.connect().then(() => second.query('SELECT 1'))).rejects.toThrow('Connection terminated unexpectedly');
      await Promise.all([closing, second.end().catch(() => undefined)]);
    } finally {
      await engine.stop();
    }
    const settings = { ...loadSettings({ NODE_ENV: 'test' }), databaseUrl: undefined, dataDir: MEMORY_DATA_DIR, migrationsRun: false };
    const opened = await openDatabase(settings);
    try {
      const pool = (opened.dataSource.driver as unknown as { master: { options: { idleTimeoutMillis?: number }; totalCount: number; idleCount: number } }).master;
      await opened.dataSource.query('SELECT 1');
      expect({ idleTimeoutMillis: pool.options.idleTimeoutMillis, total: pool.totalCount, idle: pool.idleCount }).toEqual({ idleTimeoutMillis: 0, total: 1, idle: 1 });
    } finally {
      await opened.close();
    }
  });
});
