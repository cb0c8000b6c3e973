import type { Server } from 'node:http';
import { INestApplication, Logger } from '@nestjs/common';
import { ShutdownNotice } from './shutdown-notice';

/**
 * Stops accepting connections and waits for the requests in flight to be answered, at most
 * `timeoutMs`; then closes the connections still open. Idle keep-alive connections are closed
 * as soon as they are idle, so they do not hold the shutdown.
 */
export function drainHttpServer(server: Server, timeoutMs: number): Promise<{ forced: boolean }> {
  return new Promise((resolve) => {
    let forced = false;
    const idle = setInterval(() => server.closeIdleConnections(), 50);
    const deadline = setTimeout(() => {
      forced = true;
      server.closeAllConnections();
    }, timeoutMs);
    server.close(() => {
      clearInterval(idle);
      clearTimeout(deadline);
      resolve({ forced });
    });
    server.closeIdleConnections();
  });
}

/** Extra time after the drain for the application's own shutdown (worker step, database) before a hard exit. */
export const CLOSE_GRACE_MS = 15_000;

/**
 * SIGTERM or SIGINT: stop accepting connections, let the requests in flight finish (bounded by
 * `drainTimeoutMs`), then close the application: Nest's shutdown hooks stop the worker after its
 * current step, close the metrics server, Redis and the database. Exit 0 when all of that
 * succeeded, 1 otherwise or when it takes too long. A repeated signal does not cut it short.
 */
export function handleShutdownSignals(app: INestApplication, drainTimeoutMs: number, exit: (code: number) => void = (code) => process.exit(code)): void {
  const logger = new Logger('Shutdown');
  let started = false;

  const shutdown = async (signal: NodeJS.Signals): Promise<void> => {
    const server = app.getHttpServer() as Server;
    // The worker stops claiming and long-polls answer now, not after the drain.
    app.get(ShutdownNotice, { strict: false }).begin();
    const connections = await new Promise<number>((resolve) => server.getConnections((err, n) => resolve(err ? 0 : n)));
    logger.log({ msg: 'shutdown started: no new connections; waiting for requests in flight', signal, open_connections: connections, drain_timeout_ms: drainTimeoutMs });
    const hardStop = setTimeout(() => {
      logger.error({ msg: 'shutdown did not finish in time; exiting', limit_ms: drainTimeoutMs + CLOSE_GRACE_MS });
      exit(1);
    }, drainTimeoutMs + CLOSE_GRACE_MS);
    hardStop.unref();
    try {
      const { forced } = await drainHttpServer(server, drainTimeoutMs);
      if (forced) logger.warn({ msg: 'requests still in flight after the drain timeout; their connections were closed', drain_timeout_ms: drainTimeoutMs });
      await app.close();
      logger.log({ msg: 'shutdown complete' });
      clearTimeout(hardStop);
      exit(0);
    } catch (err) {
      logger.error({ msg: 'shutdown failed', err: err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : String(err) });
      clearTimeout(hardStop);
      exit(1);
    }
  };

  const onSignal = (signal: NodeJS.Signals): void => {
    if (started) {
      logger.log({ msg: 'shutdown already in progress', signal });
      return;
    }
    started = true;
    void shutdown(signal);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
