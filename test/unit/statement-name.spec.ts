import type { DataSource } from 'typeorm';
import { loadSettings } from '../../src/shared/config/settings';
import { serverConnectionOptions } from '../../src/shared/database/data-source';
import { Db, markTransactionPooled } from '../../src/shared/database/transaction';

describe('Db.statementName: a prepared statement per SQL text', () => {
  const db = new Db({} as DataSource);
  const live = 'SELECT id FROM servers WHERE org_id = $1 AND deleted_at IS NULL LIMIT $2';
  const inZone = 'SELECT id FROM servers WHERE org_id = $1 AND deleted_at IS NULL AND zone_id = $2 LIMIT $3';

  it('gives one text one name, the same every time and in every Db', () => {
    const name = db.statementName('servers_list', live);
    expect(name).toMatch(/^servers_list_[A-Za-z0-9_-]{16}$/);
    expect(db.statementName('servers_list', live)).toBe(name);
    expect(new Db({} as DataSource).statementName('servers_list', live)).toBe(name);
  });

  it('gives another text (another combination of filters) another name, within the 63 bytes of an identifier', () => {
    const names = new Set([live, inZone, `${inZone} `].map((sql) => db.statementName('wallet_history_list', sql)));
    expect(names.size).toBe(3);
    for (const name of names) {
      expect(name).toMatch(/^wallet_history_list_/);
      expect(Buffer.byteLength(name)).toBeLessThanOrEqual(63);
    }
  });
});

describe('DATABASE_POOL_MODE: named prepared statements only on direct connections', () => {
  /** A data source whose pool records the query configs it is given, and whose TypeORM runner records the SQL. */
  const fake = () => {
    const pooled: Array<{ name?: string; text: string }> = [];
    const unnamed: string[] = [];
    const client = { query: async (config: { name?: string; text: string }) => (pooled.push(config), { rows: [{ n: 1 }], rowCount: 1 }), release: () => undefined };
    const dataSource = {
      manager: {},
      driver: { master: { connect: async () => client } },
      createQueryRunner: () => ({ query: async (sql: string) => (unnamed.push(sql), { records: [{ n: 1 }], affected: 1 }), release: async () => undefined }),
    } as unknown as DataSource;
    return { dataSource, pooled, unnamed };
  };

  it('direct: a statement with a name is a named prepared statement', async () => {
    const f = fake();
    expect(await new Db(f.dataSource).exec('SELECT 1 AS n', [], 'one')).toEqual({ rows: [{ n: 1 }], affected: 1 });
    expect(f.pooled).toEqual([{ name: 'one', text: 'SELECT 1 AS n', values: [] }]);
    expect(f.unnamed).toEqual([]);
  });

  it('transaction: the same call runs unnamed (the next statement may meet a server connection that never prepared it)', async () => {
    const f = fake();
    markTransactionPooled(f.dataSource, { dbStatementTimeoutMs: 30_000, dbIdleInTransactionTimeoutMs: 10_000 });
    expect(await new Db(f.dataSource).exec('SELECT 1 AS n', [], 'one')).toEqual({ rows: [{ n: 1 }], affected: 1 });
    expect(f.pooled).toEqual([]);
    expect(f.unnamed).toEqual(['SELECT 1 AS n']);
  });

  it('transaction: no server setting as a startup parameter (PgBouncer refuses them); direct: all of them', () => {
    const settings = { ...loadSettings({}), dbStatementTimeoutMs: 1234, dbIdleInTransactionTimeoutMs: 5678 };
    const direct = serverConnectionOptions(settings, 'app');
    expect(direct).toMatchObject({ statement_timeout: 1234, idle_in_transaction_session_timeout: 5678, options: '-c default_transaction_isolation=read\\ committed' });
    const pooled = serverConnectionOptions(settings, 'app', true);
    expect(Object.keys(pooled).sort()).toEqual(['application_name', 'connectionTimeoutMillis', 'keepAlive', 'keepAliveInitialDelayMillis']);
  });

  it('settings: direct unless DATABASE_POOL_MODE=transaction, which needs DATABASE_URL; DATABASE_DIRECT_URL a postgresql:// URL, never repeated', () => {
    expect(loadSettings({})).toMatchObject({ dbPoolMode: 'direct', databaseDirectUrl: undefined });
    const url = 'postgresql://u@db:6432/cds';
    expect(loadSettings({ DATABASE_URL: url, DATABASE_POOL_MODE: 'transaction', DATABASE_DIRECT_URL: 'postgresql://u:pw@db:5432/cds' })).toMatchObject({
      dbPoolMode: 'transaction',
      databaseDirectUrl: 'postgresql://u:pw@db:5432/cds',
    });
    expect(() => loadSettings({ DATABASE_URL: url, DATABASE_POOL_MODE: 'session' })).toThrow('Setting DATABASE_POOL_MODE must be direct or transaction, got "session"');
    expect(() => loadSettings({ DATABASE_POOL_MODE: 'transaction' })).toThrow('Setting DATABASE_POOL_MODE=transaction requires DATABASE_URL');
    expect(() => loadSettings({ DATABASE_URL: url, DATABASE_DIRECT_URL: 'mysql://u:secret@x/y' })).toThrow(
      'Setting DATABASE_DIRECT_URL must be a postgresql:// URL of the primary, past the pooler',
    );
    expect(() => loadSettings({ DATABASE_URL: url, DATABASE_DIRECT_URL: 'mysql://u:secret@x/y' })).not.toThrow(/secret/);
  });
});
