import type { Request } from 'express';
import { newId } from '../kernel/ids/ids';

const VALID_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

declare module 'express-serve-static-core' {
  interface Request {
    /**
     * The id the response's X-Request-Id header and an error's request_id carry: the client's
     * valid X-Request-Id, otherwise the server's id. Set by the request lifecycle middleware, the
     * first one (request-lifecycle.ts).
     */
    id: string;
    /** The server's own id of the request, unique per request: what logs and the audit trail record as request_id. */
    serverRequestId: string;
    /** The client's valid X-Request-Id, null when it sent none (or an invalid one). */
    clientRequestId: string | null;
  }
}

/**
 * The ids of a request: the server's own (always new, so unique per request, whatever the client
 * sends), the client's valid X-Request-Id or null, and the one echoed in the response (the
 * client's when valid, otherwise the server's).
 */
export function requestIdsFor(incoming: string | string[] | undefined): { echoed: string; server: string; client: string | null } {
  const server = newId('req');
  const client = typeof incoming === 'string' && VALID_REQUEST_ID.test(incoming) ? incoming : null;
  return { echoed: client ?? server, server, client };
}

export function requestIdOf(req: Request): string {
  return req.id ?? newId('req');
}
