import { readFileSync } from 'node:fs';
import { Client, ClientConfig } from 'pg';
import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { MIGRATIONS } from '../../../migrations';
import { retryOnLostConnection } from './connection-retry';
import { markTransactionPooled } from './transaction';
import { Settings } from '../config/settings';
import { EmbeddedPostgres, startEmbeddedPostgres } from './embedded-postgres';
import { registerTimestampParser } from './timestamps';

export interface OpenDatabase {
  dataSource: DataSource;
  engine: 'postgresql' | 'embedded';
  /** The URL the connections use (the embedded engine's socket, or DATABASE_URL). */
  url: string;
  close(): Promise<void>;
}

/** The client gives up on a query this long after the server's statement_timeout should have ended it. */
export const CLIENT_DEADLINE_GRACE_MS = 2_000;

/**
 * A pg Client that never ends the process: a connection that dies while it runs no query (idle in
 * the pool, checked out between two queries, or the one TypeORM opens at initialize) makes pg emit
 * 'error', fatal without a listener. The failure still reaches the next query, and the pool or
 * TypeORM drops the connection. Every connection of both engines is one of these.
 */
class GuardedClient extends Client {
  constructor(config?: string | ClientConfig) {
    super(config);
    this.on('error', () => undefined);
  }
}

/**
 * A pg Client whose queries have a deadline: when a query is still unanswered after it (the
 * network between us and the server went silent, so the server's statement_timeout cannot
 * reach us), the connection is destroyed. The query fails with a connection error and the
 * pool drops the connection instead of handing out one that waits for ever.
 */
function deadlineClient(deadlineMs: number): typeof Client {
  return class DeadlineClient extends GuardedClient {
    constructor(config?: string | ClientConfig) {
      super(config);
      const query = this.query.bind(this) as (...args: unknown[]) => unknown;
      (this as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
        const result = query(...args);
        if (!(result instanceof Promise)) return result;
        const timer = setTimeout(() => {
          const stream = (this as unknown as { connection?: { stream?: { destroy(err?: Error): void } } }).connection?.stream;
          stream?.destroy(new Error(`Query unanswered after ${deadlineMs} ms; connection dropped`));
        }, deadlineMs);
        return result.finally(() => clearTimeout(timer));
      };
    }
  };
}

/**
 * pg settings of a PostgreSQL server connection: connect timeout, TCP keepalive, the server's
 * statement and idle-in-transaction timeouts, READ COMMITTED transactions, and the client's query deadline. Not for the
 * embedded engine, whose socket is in this process.
 *
 * `pooled` (DATABASE_POOL_MODE=transaction, a pooler such as PgBouncer in front): the server
 * settings are not startup parameters (PgBouncer refuses those it does not know, and a server
 * connection is shared by every client); each transaction sets them with SET LOCAL instead
 * (transactionPrelude in transaction.ts).
 */
export function serverConnectionOptions(settings: Settings, applicationName: string, pooled = false): ClientConfig & Record<string, unknown> {
  const common = {
    application_name: applicationName,
    connectionTimeoutMillis: settings.dbConnectTimeoutMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  };
  if (pooled) return common;
  return {
    ...common,
    statement_timeout: settings.dbStatementTimeoutMs,
    idle_in_transaction_session_timeout: settings.dbIdleInTransactionTimeoutMs,
    // Transactions are READ COMMITTED whatever the server's default (runTransaction sends no SET TRANSACTION).
    options: '-c default_transaction_isolation=read\\ committed',
  };
}

function dataSourceFor(settings: Settings, url: string, embedded: boolean, poolSize: number, applicationName: string): DataSource {
  const pooled = !embedded && settings.dbPoolMode === 'transaction';
  const dataSource = new DataSource({
    type: 'postgres',
    url,
    migrations: MIGRATIONS,
    migrationsTableName: 'schema_migrations',
    migrationsTransactionMode: 'all',
    synchronize: false,
    logging: false,
    poolSize,
    // The embedded engine's one connection is kept open (idleTimeoutMillis 0; pg's pool closes an
    // idle client after 10 s by default): pglite-socket refuses a new connection until it has
    // processed the close of the old one, so a query that came as the pool closed its idle client
    // met "Connection terminated unexpectedly" (seen on a loaded machine, and reproduced every
    // time by connecting while the previous client ends).
    extra: embedded
      ? { application_name: applicationName, Client: GuardedClient, idleTimeoutMillis: 0 }
      : {
          ...serverConnectionOptions(settings, applicationName, pooled),
          Client: deadlineClient(settings.dbStatementTimeoutMs + CLIENT_DEADLINE_GRACE_MS),
        },
  });
  if (pooled) markTransactionPooled(dataSource, settings);
  return dataSource;
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
 * A data source initialized (and `ready` run on it), again on a new one when a connection is lost
 * while starting (a backend terminated, a failover: retryOnLostConnection's attempts). A failed
 * attempt's data source is closed: destroyed when initialized, else the pool its driver made.
 * `ready` runs the migrations in one transaction, so an attempt cut short applied nothing.
 */
async function initializeFresh(make: () => DataSource, ready: (dataSource: DataSource) => Promise<void> = async () => undefined): Promise<DataSource> {
  return retryOnLostConnection(async () => {
    const dataSource = make();
    try {
      await dataSource.initialize();
      await ready(dataSource);
      return dataSource;
    } catch (err) {
      if (dataSource.isInitialized) await dataSource.destroy().catch(() => undefined);
      else await (dataSource.driver as unknown as { master?: Pool } | undefined)?.master?.end().catch(() => undefined);
      throw err;
    }
  });
}

/**
 * Opens the database of the settings: the PostgreSQL server of DATABASE_URL, or embedded
 * PostgreSQL (PGlite) in DATA_DIR when it is unset. Same driver, schema and migrations for both.
 * The schema is created by migrations only, never `synchronize`.
 */
export async function openDatabase(settings: Settings): Promise<OpenDatabase> {
  registerTimestampParser();
  let embedded: EmbeddedPostgres | undefined;
  let url = settings.databaseUrl;
  // The embedded engine gets ONE connection: pglite-socket keeps a connection's messages together
  // only inside a transaction, so with several connections the extended-protocol messages
  // (Parse/Bind/Execute) of concurrent queries interleave and answer each other's queries
  // (seen: a valid API key answered 401, "portal does not exist" 500s). PGlite runs one query at
  // a time anyway; requests queue for the connection instead.
  const poolSize = url ? settings.dbPoolSize : 1;
  if (!url) {
    const image = settings.memoryImage ? new Blob([readFileSync(settings.memoryImage)], { type: 'application/x-gzip' }) : undefined;
    embedded = await startEmbeddedPostgres(settings.dataDir, poolSize, image);
    url = embedded.url;
  }
  const dataSource = await initializeFresh(
    () => dataSourceFor(settings, url, Boolean(embedded), poolSize, 'cloud-disk-service'),
    async (started) => {
      if (embedded) forgetPreparedStatementsOnConnect(started);
      if (settings.migrationsRun) await started.runMigrations({ transaction: 'all' });
    },
  ).catch(async (err: unknown) => {
    await embedded?.stop();
    throw err;
  });
  return {
    dataSource,
    engine: embedded ? 'embedded' : 'postgresql',
    url,
    async close() {
      if (dataSource.isInitialized) await dataSource.destroy();
      await embedded?.stop();
    },
  };
}

/**
 * The operation worker's own pool on a PostgreSQL server (application_name
 * cloud-disk-service-worker), so HTTP requests cannot starve it: one connection per operation in
 * flight plus one for claims and hand-backs.
 */
export async function openWorkerDataSource(settings: Settings, url: string): Promise<DataSource> {
  return initializeFresh(() => dataSourceFor(settings, url, false, settings.workerConcurrency + 1, 'cloud-disk-service-worker'));
}
