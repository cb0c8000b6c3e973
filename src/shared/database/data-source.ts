import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { MIGRATIONS } from '../../../migrations';
import { Settings } from '../config/settings';
import { EmbeddedPostgres, startEmbeddedPostgres } from './embedded-postgres';

export interface OpenDatabase {
  dataSource: DataSource;
  engine: 'postgresql' | 'embedded';
  close(): Promise<void>;
}

/**
 * PGlite is one PostgreSQL session whatever the number of socket connections: a prepared statement
 * outlives the pg client that named it. A client the pool opens later (after an idle one was
 * closed) starts with an empty statement cache, so it clears the session's statements first
 * (queued before any query of its own), or its first Parse of a known name would fail.
 */
function forgetPreparedStatementsOnConnect(dataSource: DataSource): void {
  const pool = (dataSource.driver as unknown as { master: Pool }).master;
  pool.on('connect', (client) => {
    client.query('DEALLOCATE ALL').catch(() => undefined);
  });
}

/**
 * Opens the database of the settings: the PostgreSQL server of DATABASE_URL, or embedded
 * PostgreSQL (PGlite) in DATA_DIR when it is unset. Same driver, schema and migrations for both.
 * The schema is created by migrations only, never `synchronize`.
 */
export async function openDatabase(settings: Settings): Promise<OpenDatabase> {
  let embedded: EmbeddedPostgres | undefined;
  let url = settings.databaseUrl;
  // The embedded engine gets ONE connection: pglite-socket keeps a connection's messages together
  // only inside a transaction, so with several connections the extended-protocol messages
  // (Parse/Bind/Execute) of concurrent queries interleave and answer each other's queries
  // (seen: a valid API key answered 401, "portal does not exist" 500s). PGlite runs one query at
  // a time anyway; requests queue for the connection instead.
  const poolSize = url ? settings.dbPoolSize : 1;
  if (!url) {
    embedded = await startEmbeddedPostgres(settings.dataDir, poolSize);
    url = embedded.url;
  }
  const dataSource = new DataSource({
    type: 'postgres',
    url,
    migrations: MIGRATIONS,
    migrationsTableName: 'schema_migrations',
    migrationsTransactionMode: 'all',
    synchronize: false,
    logging: false,
    poolSize,
    extra: { application_name: 'cloud-disk-service' },
  });
  try {
    await dataSource.initialize();
    if (embedded) forgetPreparedStatementsOnConnect(dataSource);
    if (settings.migrationsRun) await dataSource.runMigrations({ transaction: 'all' });
  } catch (err) {
    if (dataSource.isInitialized) await dataSource.destroy();
    await embedded?.stop();
    throw err;
  }
  return {
    dataSource,
    engine: embedded ? 'embedded' : 'postgresql',
    async close() {
      if (dataSource.isInitialized) await dataSource.destroy();
      await embedded?.stop();
    },
  };
}
