import { AsyncLocalStorage } from 'node:async_hooks';
import { hash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Pool, PoolClient, QueryResult } from 'pg';
import { DataSource, EntityManager, QueryFailedError } from 'typeorm';

import { isConnectionLost, retryOnLostConnection } from './connection-retry';
import { UnitOfWork, WorkerUnitOfWork } from './unit-of-work';

export { UnitOfWork, WorkerUnitOfWork };

const storage = new AsyncLocalStorage<EntityManager>();

/**
 * Data sources that reach PostgreSQL through a pooler in transaction mode (DATABASE_POOL_MODE=
 * transaction), with the SET LOCAL statements that give each transaction the server settings a
 * direct connection gets as startup parameters. Through such a pooler nothing outlives a
 * transaction on its server connection: no named prepared statement, no session SET, no
 * session-level advisory lock, no LISTEN.
 */
const transactionPooled = new WeakMap<DataSource, string>();

export function markTransactionPooled(dataSource: DataSource, settings: { dbStatementTimeoutMs: number; dbIdleInTransactionTimeoutMs: number }): void {
  transactionPooled.set(
    dataSource,
    `SET LOCAL statement_timeout = ${Math.trunc(settings.dbStatementTimeoutMs)}; SET LOCAL idle_in_transaction_session_timeout = ${Math.trunc(settings.dbIdleInTransactionTimeoutMs)}`,
  );
}

export function isTransactionPooled(dataSource: DataSource): boolean {
  return transactionPooled.has(dataSource);
}

/**
 * The statement a transaction of `dataSource` starts with (one round trip, simple protocol):
 * through a transaction-mode pooler, READ COMMITTED (`isolation`) or READ ONLY and the timeouts
 * as SET LOCAL; else only `direct`, if any.
 */
function transactionPrelude(dataSource: DataSource, pooledFirst: string, direct?: string): string | undefined {
  const timeouts = transactionPooled.get(dataSource);
  return timeouts === undefined ? direct : `${pooledFirst}; ${timeouts}`;
}
/** Callbacks to run once the transaction of an EntityManager has committed. */
const committed = new WeakMap<EntityManager, Array<() => void>>();

/**
 * Runs `work` in one READ COMMITTED transaction of `dataSource`, carried to every adapter (Db)
 * through AsyncLocalStorage; then, once it committed, the callbacks given to Db.afterCommit.
 * READ COMMITTED is every connection's default (default_transaction_isolation, set by
 * serverConnectionOptions; the embedded engine's own default), so the transaction starts without
 * a SET TRANSACTION round trip of its own.
 */
export async function runTransaction<T>(dataSource: DataSource, work: () => Promise<T>): Promise<T> {
  const callbacks: Array<() => void> = [];
  const prelude = transactionPrelude(dataSource, 'SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
  const result = await dataSource.transaction(async (manager) => {
    committed.set(manager, callbacks);
    if (prelude !== undefined) await manager.query(prelude);
    return storage.run(manager, work);
  });
  for (const callback of callbacks) callback();
  return result;
}

/**
 * The database handle of every TypeORM adapter: inside UnitOfWork.run it is the transaction's
 * EntityManager, outside the DataSource's. Never open a second connection inside a transaction:
 * on the embedded engine it would wait for ever.
 */
@Injectable()
export class Db {
  constructor(readonly dataSource: DataSource) {}

  /** Whether the data source goes through a transaction-mode pooler (no named prepared statements then). */
  private get pooled(): boolean {
    return isTransactionPooled(this.dataSource);
  }

  manager(): EntityManager {
    return storage.getStore() ?? this.dataSource.manager;
  }

  inTransaction(): boolean {
    return storage.getStore() !== undefined;
  }

  /** Runs `callback` once the active transaction commits (never when it rolls back); at once outside one. */
  afterCommit(callback: () => void): void {
    const manager = storage.getStore();
    const callbacks = manager && committed.get(manager);
    if (callbacks) callbacks.push(callback);
    else callback();
  }

  /** Statement names in use, each bound to one SQL text (a name reused for another text is a bug). */
  private readonly statements = new Map<string, string>();
  /** Names given by statementName(), by prefix, then SQL text. */
  private readonly namesByText = new Map<string, Map<string, string>>();

  /**
   * A prepared statement's name derived from its SQL text: `prefix` and a digest of the text. For
   * SQL assembled from optional parts (a list's filters), where each combination present is a text
   * of its own, so each gets its own statement without a name kept beside the text by hand.
   */
  statementName(prefix: string, sql: string): string {
    let names = this.namesByText.get(prefix);
    if (!names) this.namesByText.set(prefix, (names = new Map()));
    let name = names.get(sql);
    if (name === undefined) {
      name = `${prefix}_${hash('sha1', sql, 'base64url').slice(0, 16)}`;
      names.set(sql, name);
    }
    return name;
  }

  /**
   * Runs SQL on the active transaction (or a pooled connection): the rows and the affected row count.
   *
   * With `name` (and not through a transaction-mode pooler), the statement is a named prepared statement: parsed and planned once per database
   * connection, then only bound and executed (the hot reads and the renewal use it). It goes to
   * the pg connection directly, past TypeORM's per-query bookkeeping. A name stands for one SQL
   * text; one statement only, never one whose text varies from call to call.
   */
  async exec<T = Record<string, unknown>>(sql: string, params: unknown[] = [], name?: string): Promise<{ rows: T[]; affected: number }> {
    // Through a transaction-mode pooler the next statement may land on another server connection,
    // which never prepared the name: every statement is an unnamed one there.
    if (name !== undefined && !this.pooled) return this.execPrepared<T>(name, sql, params);
    const manager = this.manager();
    if (manager.queryRunner) {
      // In a transaction: a lost connection fails the whole transaction, retried by UnitOfWork.
      const result = await manager.queryRunner.query(sql, params, true);
      return { rows: (result.records ?? []) as T[], affected: result.affected ?? 0 };
    }
    // One statement on a pooled connection: again on a fresh one if that connection died.
    return retryOnLostConnection(async () => {
      const own = this.dataSource.createQueryRunner();
      try {
        const result = await own.query(sql, params, true);
        return { rows: (result.records ?? []) as T[], affected: result.affected ?? 0 };
      } finally {
        await own.release();
      }
    });
  }

  /** Runs SQL on the active transaction (or a pooled connection); rows as plain objects. `name`: see exec. */
  async query<T = Record<string, unknown>>(sql: string, params: unknown[] = [], name?: string): Promise<T[]> {
    return (await this.exec<T>(sql, params, name)).rows;
  }

  async one<T = Record<string, unknown>>(sql: string, params: unknown[] = [], name?: string): Promise<T | undefined> {
    return (await this.exec<T>(sql, params, name)).rows[0];
  }

  /**
   * A named statement on the active transaction's connection, or on a pooled one (again on a
   * fresh connection if that one died). Not pool.query(): it destroys the connection on any query
   * error (a constraint violation would cost a reconnect, and on the embedded engine it drops the
   * only connection).
   */
  private async execPrepared<T>(name: string, text: string, values: unknown[]): Promise<{ rows: T[]; affected: number }> {
    const known = this.statements.get(name);
    if (known === undefined) this.statements.set(name, text);
    else if (known !== text) throw new Error(`Prepared statement ${name} is already bound to another SQL text`);
    const config = { name, text, values };
    const runner = this.manager().queryRunner;
    let result: QueryResult;
    try {
      result = runner ? await ((await runner.connect()) as PoolClient).query(config) : await retryOnLostConnection(() => this.onPooledConnection(config));
    } catch (err) {
      // The same error as TypeORM's path throws (sqlState, constraintOf and the logs see one shape).
      throw err instanceof Error && 'code' in err ? new QueryFailedError(text, values, err) : err;
    }
    return { rows: result.rows as T[], affected: result.rowCount ?? 0 };
  }

  private async onPooledConnection(config: { name: string; text: string; values: unknown[] }): Promise<QueryResult> {
    const client = await (this.dataSource.driver as unknown as { master: Pool }).master.connect();
    let failed: unknown;
    try {
      return await client.query(config);
    } catch (err) {
      failed = err;
      throw err;
    } finally {
      // A connection that died is dropped from the pool, not handed out again.
      client.release(failed !== undefined && isConnectionLost(failed) ? (failed as Error) : undefined);
    }
  }
}

let savepointCounter = 0;

@Injectable()
export class TypeOrmUnitOfWork extends UnitOfWork {
  constructor(private readonly db: Db) {
    super();
  }

  run<T>(work: () => Promise<T>): Promise<T> {
    if (this.db.inTransaction()) return work(); // joins the enclosing transaction
    // A transaction whose connection died before COMMIT left nothing: run it again (connection-retry.ts).
    return retryOnLostConnection(() => runTransaction(this.db.dataSource, work));
  }

  readSnapshot<T>(work: () => Promise<T>): Promise<T> {
    return readSnapshot(this.db, this.db.dataSource, work);
  }

  savepoint<T>(work: () => Promise<T>): Promise<T> {
    return savepoint(this.db, work);
  }

  afterCommit(callback: () => void): void {
    this.db.afterCommit(callback);
  }
}

/**
 * WorkerUnitOfWork on TypeORM: on a PostgreSQL server the transactions run on the worker's own
 * pool (opened at the first transaction, so processes that never run the worker never open it).
 * On the embedded engine, which has one connection, they are the ordinary ones.
 */
export class TypeOrmWorkerUnitOfWork extends WorkerUnitOfWork {
  private source: Promise<DataSource> | undefined;

  constructor(
    private readonly db: Db,
    private readonly open: (() => Promise<DataSource>) | undefined,
  ) {
    super();
  }

  run<T>(work: () => Promise<T>): Promise<T> {
    if (this.db.inTransaction()) return work();
    if (!this.open) return runTransaction(this.db.dataSource, work);
    const open = this.open;
    this.source ??= Promise.resolve()
      .then(() => open())
      .catch((err: unknown) => {
        this.source = undefined; // the next transaction tries again
        throw err;
      });
    return this.source.then((dataSource) => runTransaction(dataSource, work));
  }

  /** On the HTTP pool: a snapshot read is no worker step. */
  readSnapshot<T>(work: () => Promise<T>): Promise<T> {
    return readSnapshot(this.db, this.db.dataSource, work);
  }

  savepoint<T>(work: () => Promise<T>): Promise<T> {
    return savepoint(this.db, work);
  }

  afterCommit(callback: () => void): void {
    this.db.afterCommit(callback);
  }

  async close(): Promise<void> {
    const source = this.source;
    this.source = undefined;
    const dataSource = await source?.catch(() => undefined);
    if (dataSource?.isInitialized) await dataSource.destroy();
  }
}

/** `work` in one read-only REPEATABLE READ transaction of `dataSource` (one snapshot), again on a lost connection. */
function readSnapshot<T>(db: Db, dataSource: DataSource, work: () => Promise<T>): Promise<T> {
  if (db.inTransaction()) throw new Error('UnitOfWork.readSnapshot() cannot run inside a transaction');
  return retryOnLostConnection(() =>
    dataSource.transaction('REPEATABLE READ', (manager) =>
      storage.run(manager, async () => {
        await manager.query(transactionPrelude(dataSource, 'SET TRANSACTION READ ONLY', 'SET TRANSACTION READ ONLY')!);
        return work();
      }),
    ),
  );
}

async function savepoint<T>(db: Db, work: () => Promise<T>): Promise<T> {
  if (!db.inTransaction()) throw new Error('UnitOfWork.savepoint() must run inside UnitOfWork.run()');
  const name = `sp_${++savepointCounter}`;
  await db.exec(`SAVEPOINT ${name}`);
  let result: T;
  try {
    result = await work();
  } catch (err) {
    // Undo the work's writes only; the original error is what matters if this fails too.
    await db.exec(`ROLLBACK TO SAVEPOINT ${name}`).catch(() => undefined);
    throw err;
  }
  await db.exec(`RELEASE SAVEPOINT ${name}`);
  return result;
}

/** PostgreSQL SQLSTATE of an error thrown by the driver, if any. */
export function sqlState(err: unknown): string | undefined {
  const e = err as { code?: unknown; driverError?: { code?: unknown } };
  const code = e?.driverError?.code ?? e?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Name of the constraint a driver error names, if any. */
export function constraintOf(err: unknown): string | undefined {
  const e = err as { constraint?: unknown; driverError?: { constraint?: unknown } };
  const name = e?.driverError?.constraint ?? e?.constraint;
  return typeof name === 'string' ? name : undefined;
}

export const UNIQUE_VIOLATION = '23505';
export const CHECK_VIOLATION = '23514';
export const FOREIGN_KEY_VIOLATION = '23503';

