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
  if (!url) {
    embedded = await startEmbeddedPostgres(settings.dataDir, settings.dbPoolSize);
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
    poolSize: settings.dbPoolSize,
    extra: { application_name: 'cloud-disk-service' },
  });
  try {
    await dataSource.initialize();
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
