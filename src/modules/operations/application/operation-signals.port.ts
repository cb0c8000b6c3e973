/**
 * Wake-ups between the processes that accept, execute and wait for operations. On a PostgreSQL
 * server they are LISTEN/NOTIFY notifications sent by the transaction that made the change (so
 * they arrive only once it committed, in every process); on the embedded engine, which serves
 * one process, events in this process after the commit.
 */
export abstract class OperationSignals {
  /** In the transaction that made operations claimable (created, handed back): wakes the workers once it commits. */
  abstract announceWork(): Promise<void>;
  /** In the transaction that ended these operations: wakes whoever waits for them once it commits. */
  abstract announceEnded(ids: readonly string[]): Promise<void>;
  /** Calls `listener` whenever claimable work may have appeared. Returns a function that unsubscribes. */
  abstract onWork(listener: () => void): () => void;
  /**
   * Resolves when operation `id` may have ended (a notification for it; also after a lost
   * connection to the notifications, when one may have been missed), when `timeoutMs` has
   * passed, when `abort` fires, or when the server starts shutting down. The caller reads the
   * operation again to know which.
   */
  abstract waitForEnd(id: string, timeoutMs: number, abort?: AbortSignal): Promise<void>;
}

/** Signals that go nowhere: unit tests, and the CLI, which never waits for operations. */
export class NoOperationSignals extends OperationSignals {
  async announceWork(): Promise<void> {}
  async announceEnded(): Promise<void> {}
  onWork(): () => void {
    return () => undefined;
  }
  waitForEnd(_id: string, timeoutMs: number, abort?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      abort?.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
