import type { NextFunction, Request, Response } from 'express';
import { RequestLog } from '../observability/logging';
import { CLIENT_CLOSED_STATUS, Metrics } from '../observability/metrics';
import { routeOf } from '../observability/route-label';
import { runInRequestContext } from './request-context';
import { requestIdsFor } from './request-id';

/**
 * The first middleware of every request, and the only one it passes through before the body
 * parser and Nest: its ids (request-id.ts: the server's own, new for every request, and the
 * client's valid X-Request-Id; the response echoes the client's, otherwise the server's), its
 * context (request-context.ts: the audit trail and every log line read both ids from it), and
 * once the response is done, or its client went away first, the request's metrics (counted and
 * timed once, status 499 for a client gone) and its one log line (RequestLog). One listener per
 * request: a response emits 'close' after 'finish', and alone when its connection closed first.
 */
export function requestLifecycle(metrics: Metrics, log: RequestLog): (req: Request, res: Response, next: NextFunction) => void {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    const ids = requestIdsFor(req.headers['x-request-id']);
    req.id = ids.echoed;
    req.serverRequestId = ids.server;
    req.clientRequestId = ids.client;
    res.setHeader('X-Request-Id', ids.echoed);
    // 'close' is emitted once per response: `on`, not `once` (no wrapper to add and remove per request).
    res.on('close', () => {
      const elapsedNs = Number(process.hrtime.bigint() - started);
      const status = res.writableFinished ? String(res.statusCode) : CLIENT_CLOSED_STATUS;
      metrics.observeRequest(req.method, routeOf(req), status, elapsedNs / 1e9);
      log.ended(req, res, Math.round(elapsedNs / 1e6));
    });
    runInRequestContext({ requestId: ids.server, clientRequestId: ids.client }, next);
  };
}
