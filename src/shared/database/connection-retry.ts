/**
 * A database connection that died under a statement (backend terminated by an administrator or
 * a failover, server restarting, network cut) fails that statement with a connection error,
 * not an answer about the data. Such a failure is retried on a fresh connection instead of
 * becoming a 500: the pool drops the dead connection, and a transaction that did not reach
 * COMMIT left nothing behind. (A connection lost during COMMIT itself leaves the outcome
 * unknown; the retry then meets what was committed: a unique key, an unfinished operation or
 * a stored Idempotency-Key answer, never a second charge.)
 */

/** SQLSTATE classes and codes of a lost connection: 08 connection exception, 57P01-03 shutdown/cannot connect now. */
const LOST_STATES = ['57P01', '57P02', '57P03'];
const LOST_MESSAGES = /Connection terminated|connection error and is not queryable|Client was closed and is not queryable|ECONNRESET|ECONNREFUSED|EPIPE|terminating connection due to administrator command/i;

export function isConnectionLost(err: unknown): boolean {
  const e = err as { name?: unknown; code?: unknown; message?: unknown; driverError?: { code?: unknown; message?: unknown } } | undefined;
  // TypeORM releases a query runner whose connection emitted an error; its next query throws this.
  if (e?.name === 'QueryRunnerAlreadyReleasedError') return true;
  const code = e?.driverError?.code ?? e?.code;
  if (typeof code === 'string' && (code.startsWith('08') || LOST_STATES.includes(code))) return true;
  const message = `${String(e?.message ?? '')} ${String(e?.driverError?.message ?? '')}`;
  return LOST_MESSAGES.test(message);
}

/** Attempts in all (the first included) and the pause before each retry. */
export const CONNECTION_RETRY_DELAYS_MS = [0, 50, 250];

/** Runs `work`, again on a lost connection (up to CONNECTION_RETRY_DELAYS_MS.length attempts). */
export async function retryOnLostConnection<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      const next = CONNECTION_RETRY_DELAYS_MS[attempt + 1];
      if (next === undefined || !isConnectionLost(err)) throw err;
      await new Promise((resolve) => setTimeout(resolve, next));
    }
  }
}
