/**
 * Port: "do these things in one database transaction". Use cases depend on this; adapters
 * pick up the active transaction (see Db in transaction.ts). Nested calls join the outer one.
 */
export abstract class UnitOfWork {
  abstract run<T>(work: () => Promise<T>): Promise<T>;
  /**
   * Inside run(): runs `work` in a savepoint of the active transaction. When it throws, only its
   * own writes are undone (the enclosing transaction stays usable) and the error is rethrown.
   */
  abstract savepoint<T>(work: () => Promise<T>): Promise<T>;
  /**
   * Runs `work` in one read-only REPEATABLE READ transaction: every read of it sees the same
   * snapshot of the database, and any write is refused. Not inside run().
   */
  abstract readSnapshot<T>(work: () => Promise<T>): Promise<T>;
  /**
   * Inside run(): calls `callback` once the outermost transaction has committed (never when it
   * rolls back), so an effect outside the database (a cache eviction) cannot precede the commit
   * when the use case runs inside a caller's transaction. Outside a transaction: at once.
   */
  afterCommit(callback: () => void): void {
    callback();
  }
}

/**
 * The operation worker's transactions. On a PostgreSQL server they run on a pool of the
 * worker's own, so HTTP requests cannot starve the worker nor the worker the requests.
 */
export abstract class WorkerUnitOfWork extends UnitOfWork {}

/**
 * True when the database ended the transaction to break a deadlock (SQLSTATE 40P01): nothing
 * of it was written, and running it again is safe.
 */
export function endedByDeadlock(err: unknown): boolean {
  const e = err as { code?: unknown; driverError?: { code?: unknown } };
  return (e?.driverError?.code ?? e?.code) === '40P01';
}
