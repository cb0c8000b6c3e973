import type { EventEmitter } from 'node:events';
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
    guardNewConnections(dataSource);
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

/**
 * A backend terminated in the instant its connection is handed out (its ReadyForQuery and the
 * FATAL error in one network read) makes the pg client emit 'error' before TypeORM has
 * attached its listener: an unhandled 'error' event would crash the process (seen under
 * pg_terminate_backend in `npm run chaos`). Every new pool connection gets a listener of its
 * own; the failure still reaches the query that was running, and the pool drops the connection.
 */
function guardNewConnections(dataSource: DataSource): void {
  const pool = (dataSource.driver as unknown as { master?: EventEmitter }).master;
  pool?.on('connect', (client: EventEmitter) => client.on('error', () => undefined));
}
