import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';

import { retryOnLostConnection } from './connection-retry';
import { UnitOfWork } from './unit-of-work';

export { UnitOfWork };

const storage = new AsyncLocalStorage<EntityManager>();

/**
 * The database handle of every TypeORM adapter: inside UnitOfWork.run it is the transaction's
 * EntityManager, outside the DataSource's. Never open a second connection inside a transaction:
 * on the embedded engine it would wait for ever.
 */
@Injectable()
export class Db {
  constructor(readonly dataSource: DataSource) {}

  manager(): EntityManager {
    return storage.getStore() ?? this.dataSource.manager;
  }

  inTransaction(): boolean {
    return storage.getStore() !== undefined;
  }

  /** Runs SQL on the active transaction (or a pooled connection): the rows and the affected row count. */
  async exec<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<{ rows: T[]; affected: number }> {
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

  /** Runs SQL on the active transaction (or a pooled connection); rows as plain objects. */
  async query<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
    return (await this.exec<T>(sql, params)).rows;
  }

  async one<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T | undefined> {
    const rows = await this.query<T>(sql, params);
    return rows[0];
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
    return retryOnLostConnection(() => this.db.dataSource.transaction('READ COMMITTED', (manager) => storage.run(manager, work)));
  }

  readSnapshot<T>(work: () => Promise<T>): Promise<T> {
    if (this.db.inTransaction()) throw new Error('UnitOfWork.readSnapshot() cannot run inside a transaction');
    return retryOnLostConnection(() =>
      this.db.dataSource.transaction('REPEATABLE READ', (manager) =>
        storage.run(manager, async () => {
          await manager.query('SET TRANSACTION READ ONLY');
          return work();
        }),
      ),
    );
  }

  async savepoint<T>(work: () => Promise<T>): Promise<T> {
    if (!this.db.inTransaction()) throw new Error('UnitOfWork.savepoint() must run inside UnitOfWork.run()');
    const name = `sp_${++savepointCounter}`;
    await this.db.exec(`SAVEPOINT ${name}`);
    let result: T;
    try {
      result = await work();
    } catch (err) {
      // Undo the work's writes only; the original error is what matters if this fails too.
      await this.db.exec(`ROLLBACK TO SAVEPOINT ${name}`).catch(() => undefined);
      throw err;
    }
    await this.db.exec(`RELEASE SAVEPOINT ${name}`);
    return result;
  }
}

/** PostgreSQL SQLSTATE of an error thrown by the driver, if any. */
export function sqlState(err: unknown): string | undefined {
  const e = err as { code?: unknown; driverError?: { code?: unknown } };
  const code = e?.driverError?.code ?? e?.code;
  return typeof code === 'string' ? code : undefined;
}

export const UNIQUE_VIOLATION = '23505';
export const CHECK_VIOLATION = '23514';
export const FOREIGN_KEY_VIOLATION = '23503';
